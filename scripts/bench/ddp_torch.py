"""PyTorch's DDP on npm run bench:distributed's workload, one rank of a torchrun run: the MLP 784-512-512-10,
batch 64 per rank, SGD lr 0.01 momentum 0.9, 1 thread, Gloo, the same sin-filled inputs and i % 10 targets,
20 warm-up steps, then STEPS steps timed. Rank 0 prints one JSON line: steps/s and samples/s (global).

    python3 -m torch.distributed.run --nproc_per_node 2 scripts/bench/ddp_torch.py STEPS
"""
import json
import math
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

BATCH = 64


def main():
    steps = int(sys.argv[1])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                                  nn.Linear(512, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    samples = (steps + 20) * BATCH
    inputs = torch.sin(torch.arange(samples * 784, dtype=torch.float64) * 0.37).float().reshape(samples, 784)
    targets = torch.arange(samples) % 10
    loss_fn = nn.CrossEntropyLoss()

    def step(i):
        x, y = inputs[i * BATCH:(i + 1) * BATCH], targets[i * BATCH:(i + 1) * BATCH]
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        optimizer.step()

    for i in range(20):
        step(i)
    dist.barrier()
    started = time.perf_counter()
    for i in range(20, 20 + steps):
        step(i)
    seconds = time.perf_counter() - started
    if rank == 0:
        print(json.dumps({"stepsPerSecond": steps / seconds, "samplesPerSecond": steps * BATCH * world / seconds}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
