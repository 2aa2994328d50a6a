"""torchvision models with seeded random weights, saved as torchvision publishes them, and their logits:
what test/torchvision-models.test.ts loads into firebrand's torchvision.models. Run as
python3 torchvision-checkpoints.py <folder>; prints JSON: {name: {"logits": [...], "files": [...]}} and the
shape of the input (seeded, in <folder>/input.json)."""
import json
import sys

import torch
import torchvision

folder = sys.argv[1]
try:
    from safetensors.torch import save_file
except ImportError:
    save_file = None

MODELS = {
    "resnet18": lambda: torchvision.models.resnet18(num_classes=10),
    "resnet50": lambda: torchvision.models.resnet50(num_classes=10),
    "mobilenet_v3_large": lambda: torchvision.models.mobilenet_v3_large(num_classes=10),
    "mobilenet_v3_small": lambda: torchvision.models.mobilenet_v3_small(num_classes=10),
}
torch.manual_seed(0)
pixels = torch.rand(2, 3, 64, 64) * 2 - 1
result = {"input": pixels.flatten().tolist(), "inputShape": list(pixels.shape), "torchvision": torchvision.__version__}
for name, make in MODELS.items():
    model = make().eval()
    with torch.no_grad():
        # Running statistics and affine weights away from their initial 0 and 1, so that eval mode tests them.
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.2, 0.2)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
        logits = model(pixels)
    files = [f"{folder}/{name}.pth"]
    torch.save(model.state_dict(), files[0])
    if save_file is not None:
        files.append(f"{folder}/{name}.safetensors")
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, files[1])
    result[name] = {"logits": logits.flatten().tolist(), "files": files}
# A whole pickled model (its classes are globals the file would import): refused.
torch.save(torchvision.models.mobilenet_v3_small(num_classes=10), f"{folder}/whole-model.pt")
# A pickle that would run a command when unpickled by Python's pickle: refused, never run.
class Payload:
    def __reduce__(self):
        import os
        return (os.system, (f"touch {folder}/pwned",))


torch.save({"weight": torch.zeros(2), "payload": Payload()}, f"{folder}/malicious.pt")
# A checkpoint with the state dict nested beside other values.
torch.save({"epoch": 3, "lr": 0.1, "model": MODELS["mobilenet_v3_small"]().state_dict()}, f"{folder}/checkpoint.pt")
print(json.dumps(result))
