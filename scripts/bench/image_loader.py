"""The Python side of scripts/bench/image-loader.ts (run where python3-torchvision is, the sid chroot).

    python3 image_loader.py make <root> <kind> <per_class>   writes an image folder: 'photos' (500x375 JPEGs,
                                                             ImageNet-like) or 'tiny' (32x32 PNGs, CIFAR-like);
                                                             prints {"images": n, "seconds": s}
    python3 image_loader.py load <root> <size> <workers> <batch> <epochs> <loader>
        torchvision's ImageFolder + DataLoader over <root>: decode, RandomResizedCrop(size), RandomHorizontalFlip,
        ToDtype(float32, scale=True), Normalize; <loader> 'pil' (ImageFolder's default) or 'decode_image'
        (torchvision.io, tensors throughout). Prints {"images": n, "seconds": s} of the last epoch, the workers
        persistent (started once, before it).
"""
import json
import pathlib
import sys
import time

import numpy
import torch
from PIL import Image
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder
from torchvision.io import ImageReadMode, decode_image
from torchvision.transforms import v2


def make(root, kind, per_class):
    started = time.perf_counter()
    generator = numpy.random.default_rng(0)
    height, width, suffix = (375, 500, "jpg") if kind == "photos" else (32, 32, "png")
    y, x = numpy.mgrid[0:height, 0:width]
    for label in range(10):
        folder = pathlib.Path(root) / f"class{label}"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            phase = generator.uniform(0, 6.28, 3)
            planes = [127 + 100 * numpy.sin(x / (7 + label) + y / 11 + p) for p in phase]
            pixels = numpy.stack(planes, -1) + generator.normal(0, 20, (height, width, 3))
            image = Image.fromarray(numpy.clip(pixels, 0, 255).astype(numpy.uint8))
            image.save(folder / f"{i}.{suffix}", **({"quality": 90} if suffix == "jpg" else {}))
    print(json.dumps({"images": 10 * per_class, "seconds": time.perf_counter() - started}))


def read_rgb(path):
    """torchvision.io's decoder as ImageFolder's loader (a module-level function: workers pickle it)."""
    return decode_image(path, mode=ImageReadMode.RGB)


def load(root, size, workers, batch, epochs, loader):
    steps = [v2.RandomResizedCrop(size, antialias=True), v2.RandomHorizontalFlip()]
    if loader == "pil":
        steps.append(v2.PILToTensor())
        dataset = ImageFolder(root, transform=v2.Compose(steps + [v2.ToDtype(torch.float32, scale=True),
                                                                  v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]))
    else:
        dataset = ImageFolder(root, loader=read_rgb,
                              transform=v2.Compose(steps + [v2.ToDtype(torch.float32, scale=True),
                                                            v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]))
    # Persistent workers, and only the last epoch timed: the steady state, not the workers' start-up
    # (under Python 3.14's forkserver each worker imports torch again, seconds per epoch otherwise).
    data = DataLoader(dataset, batch_size=batch, shuffle=True, num_workers=workers, persistent_workers=workers > 0)
    for epoch in range(epochs):
        images = 0
        started = time.perf_counter()
        for inputs, _labels in data:
            images += inputs.shape[0]
    print(json.dumps({"images": images, "seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    command, root = sys.argv[1], sys.argv[2]
    if command == "make":
        make(root, sys.argv[3], int(sys.argv[4]))
    else:
        load(root, int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7])
