#!/usr/bin/python3
"""Writes examples/data/resnet18-gray.pt: the ResNet-18 of scripts/make-module-fixtures.py (torchvision's
layout, CIFAR stem, width 8) for 1-channel 28x28 images, with random weights standing in for a
pretrained backbone (nothing downloads from a hub), scripted by PyTorch for
examples/finetune-resnet.ts.

Run: /usr/bin/python3 scripts/make-example-models.py
"""
import importlib.util
import pathlib

import torch
from torch import nn

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    spec = importlib.util.spec_from_file_location("fixtures", ROOT / "scripts" / "make-module-fixtures.py")
    fixtures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixtures)
    torch.manual_seed(0)
    model = fixtures.ResNet18(width=8, num_classes=10)
    model.conv1 = nn.Conv2d(1, 8, 3, stride=1, padding=1, bias=False)
    nn.init.kaiming_normal_(model.conv1.weight, mode="fan_out", nonlinearity="relu")
    out = ROOT / "examples" / "data" / "resnet18-gray.pt"
    torch.jit.script(model.eval()).save(str(out))
    print(f"wrote {out} ({sum(p.numel() for p in model.parameters())} parameters)")


if __name__ == "__main__":
    main()
