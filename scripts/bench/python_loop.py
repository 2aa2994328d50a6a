#!/usr/bin/env python3
"""The plain PyTorch side of `npm run bench`: the bench workloads trained by an
eager loop (batches pre-cut in memory, the loss read back every 50 steps as a
logging loop would). Prints one JSON line.
  python3 python_loop.py <tiny|mlp|cnn|cnn-module|resnet|resnet-head|transformer|gpt> <steps> <threads>
  (cnn-module is the cnn: firebrand writes it as a TypeScript module; resnet is the ResNet-18 and gpt
  the GPT-mini of scripts/make-module-fixtures.py, at width 16 and at 256 tokens, context 64, width 128)
  python3 python_loop.py export-transformer <path.pt>   (the TorchScript model all three sides train)
  python3 python_loop.py generate-gpt <tokens> <threads>  (sampling from the gpt model: tokens/s)
"""
import time

STARTED = time.perf_counter()

import importlib.util  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
from torch import nn  # noqa: E402

BATCHES = 16


class TinyTransformer(nn.Module):
    """2 encoder layers, d=128, 4 heads, token ids [batch, 64] -> 10 classes."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(1000, 128)
        layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(128, 10)

    def forward(self, tokens):
        return self.head(self.encoder(self.embedding(tokens)).mean(dim=1))


def workload(name):
    cross_entropy = nn.CrossEntropyLoss()
    if name == "tiny":
        model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
        return model, torch.optim.SGD(model.parameters(), lr=0.01), nn.MSELoss(), torch.randn(BATCHES, 32, 16), torch.randn(BATCHES, 32, 1)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
        return model, torch.optim.Adam(model.parameters(), lr=1e-3), cross_entropy, torch.randn(BATCHES, 128, 784), torch.randint(10, (BATCHES, 128))
    if name in ("cnn", "cnn-module"):
        model = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))
        return model, torch.optim.AdamW(model.parameters(), lr=1e-3), cross_entropy, torch.randn(BATCHES, 64, 1, 28, 28), torch.randint(10, (BATCHES, 64))
    if name in ("resnet", "resnet-head", "gpt"):
        spec = importlib.util.spec_from_file_location("fixtures", pathlib.Path(__file__).resolve().parent.parent / "make-module-fixtures.py")
        fixtures = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fixtures)
    if name == "gpt":
        model = fixtures.GPTMini(vocab=256, context=64, dim=128, heads=4, layers=2)
        return model, torch.optim.AdamW(model.parameters(), lr=1e-3), cross_entropy, torch.randint(256, (BATCHES, 16, 64)), torch.randint(256, (BATCHES, 16, 64))
    if name == "resnet":
        model = fixtures.ResNet18(width=16, num_classes=10)
        return model, torch.optim.AdamW(model.parameters(), lr=1e-3), cross_entropy, torch.randn(BATCHES, 32, 3, 32, 32), torch.randint(10, (BATCHES, 32))
    if name == "resnet-head":
        # Fine-tuning the head: the backbone's parameters need no gradient (main() puts its modules in eval mode).
        model = fixtures.ResNet18(width=16, num_classes=10)
        for parameter_name, parameter in model.named_parameters():
            parameter.requires_grad_(parameter_name.startswith("fc."))
        return model, torch.optim.AdamW(model.fc.parameters(), lr=1e-3), cross_entropy, torch.randn(BATCHES, 32, 3, 32, 32), torch.randint(10, (BATCHES, 32))
    if name == "transformer":
        model = TinyTransformer()
        return model, torch.optim.AdamW(model.parameters(), lr=1e-3), cross_entropy, torch.randint(1000, (BATCHES, 32, 64)), torch.randint(10, (BATCHES, 32))
    raise SystemExit(f"unknown workload {name}")


def generate(tokens, threads):
    """A PyTorch sampling loop over the gpt workload's model, without a key/value cache: 5 runs of `tokens`
    after a 4-token prompt, the context's last 64 tokens, logits at the last position, temperature 0.8,
    top-k 20, one multinomial draw per token (what generate() does in C++)."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, *_ = workload("gpt")
    model.eval()
    started = time.perf_counter()
    with torch.no_grad():
        for _ in range(5):
            context = [1, 2, 3, 4]
            for _ in range(tokens):
                logits = model(torch.tensor([context[-64:]]))[0, :, -1] / 0.8
                kth = torch.topk(logits, 20).values[-1]
                logits = logits.masked_fill(logits < kth, float("-inf"))
                context.append(int(torch.multinomial(torch.softmax(logits, 0), 1)))
    print(json.dumps({"tokensPerSecond": 5 * tokens / (time.perf_counter() - started)}))


def main():
    if sys.argv[1] == "generate-gpt":
        generate(int(sys.argv[2]), int(sys.argv[3]))
        return
    if sys.argv[1] == "export-transformer":
        torch.manual_seed(0)
        torch.jit.script(TinyTransformer()).save(sys.argv[2])
        return
    name, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, optimizer, loss_fn, inputs, targets = workload(name)
    model.train()
    if name == "resnet-head":
        for child_name, child in model.named_children():
            if child_name != "fc":
                child.eval()

    def step(i):
        batch = i % BATCHES
        optimizer.zero_grad()
        loss = loss_fn(model(inputs[batch]), targets[batch])
        loss.backward()
        optimizer.step()
        return loss

    step(0)
    first_step = time.perf_counter() - STARTED
    timed = time.perf_counter()
    last_loss = 0.0
    for i in range(1, steps + 1):
        loss = step(i)
        if i % 50 == 0:
            last_loss = loss.item()
    seconds = time.perf_counter() - timed
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"stepsPerSecond": steps / seconds, "firstStepSeconds": first_step, "peakRssMb": peak_rss_mb, "loss": last_loss}))


if __name__ == "__main__":
    main()
