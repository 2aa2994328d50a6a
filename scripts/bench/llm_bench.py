#!/usr/bin/env python3
"""transformers' (and PEFT's) side of `npm run bench:llm`, run where python3-transformers is (the sid chroot).
PEFT is not packaged by Debian: PEFT_SRC names a folder holding its `peft` package (huggingface/peft's src/).
Prints one JSON line; {"skipped": reason} when what it needs is missing.
  python3 llm_bench.py train <folder> <lora|full> <threads> <steps> <length> <dtype> [<adapter folder>]
      (AdamW lr 1e-4, batch 1; LoRA starts from the adapter folder's weights when given)
  python3 llm_bench.py adapter <folder> <adapter folder>   (PEFT's initial LoRA adapter, seed 0, saved there)
  python3 llm_bench.py generate <folder> <threads> <prompt ids, comma-separated> <new> <dtype>   (greedy, cached)
  python3 llm_bench.py load <folder> <threads> <prompt ids, comma-separated> <dtype>   (seconds to the prompt's logits)
  python3 llm_bench.py triad <threads>   (a STREAM triad a = b + 3c on libtorch: the memory bandwidth, GB/s)
<dtype>: float32 or bfloat16; int8 is skipped (transformers' load_in_8bit needs bitsandbytes, not in Debian).
"""
import json
import os
import resource
import sys
import time

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def skipped(reason):
    print(json.dumps({"skipped": reason}))
    sys.exit(0)


try:
    import torch
except ImportError as error:
    skipped(f"no {error.name} here (the sid chroot has python3-torch and python3-transformers)")
try:
    import transformers
except ImportError as error:
    # The triad needs libtorch only: the host's python3-torch measures the bandwidth too.
    if sys.argv[1:2] != ["triad"]:
        skipped(f"no {error.name} here (the sid chroot has python3-torch and python3-transformers)")


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def import_peft():
    if os.environ.get("PEFT_SRC"):
        sys.path.insert(0, os.environ["PEFT_SRC"])
    try:
        import peft
    except ImportError as error:
        skipped(f"PEFT is not importable ({error}); set PEFT_SRC to huggingface/peft's src/ folder")
    return peft


def with_lora(model, adapter=None):
    peft = import_peft()
    if adapter:
        return peft.PeftModel.from_pretrained(model, adapter, is_trainable=True)
    config = peft.LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=LORA_TARGETS)
    return peft.get_peft_model(model, config)


def save_adapter(folder, adapter):
    """Both sides' LoRA steps start from these A matrices (B is zero), so their losses compare step by step."""
    model = load(folder, "float32")
    torch.manual_seed(0)
    with_lora(model).save_pretrained(adapter)
    return {}


def load(folder, dtype):
    if dtype == "int8":
        skipped("transformers' int8 weights (load_in_8bit) need bitsandbytes, which Debian does not package")
    return transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype))


def triad():
    count = 32 * 1024 * 1024
    a, b, c = torch.empty(count), torch.ones(count), torch.full((count,), 2.0)
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        torch.add(b, c, alpha=3, out=a)
        best = min(best, time.perf_counter() - started)
    return {"gbPerSecond": 3 * 4 * count / best / 1e9}


def train(folder, job, steps, length, dtype, adapter=None):
    model = load(folder, dtype)
    if job == "lora":
        model = with_lora(model, adapter)
    vocab = model.config.vocab_size
    # Dataset.fromTokens' windows, in order: step k reads tokens k * length .. (k + 1) * length.
    ids = torch.tensor([(i * 7919) % vocab for i in range((length + 1) * steps)])
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    model.train()
    milliseconds, losses = [], []
    for step in range(steps):
        window = ids[step * length:(step + 1) * length + 1].unsqueeze(0)
        started = time.perf_counter()
        logits = model(input_ids=window[:, :-1]).logits
        # In float32, as transformers' own loss upcasts: a bfloat16 loss is rounded to 2^-8 of itself.
        loss = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), window[:, 1:])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
        milliseconds.append((time.perf_counter() - started) * 1000)
    return {"ms": milliseconds, "losses": losses, "peakRssMb": peak_rss_mb(), "torch": torch.__version__}


class TokenArrivals:
    """A generate streamer that notes when each new token arrives (its first put is the prompt)."""

    def __init__(self):
        self.times = []

    def put(self, value):
        self.times.append(time.perf_counter())

    def end(self):
        pass


def load_to_logits(folder, prompt, dtype):
    """As firebrand's side: from the load call to the prompt's logits, and the peak RSS."""
    started = time.perf_counter()
    model = load(folder, dtype)
    model.eval()
    with torch.no_grad():
        model(input_ids=torch.tensor([prompt])).logits
    return {"seconds": time.perf_counter() - started, "peakRssMb": peak_rss_mb()}


def generate(folder, prompt, new, dtype):
    model = load(folder, dtype)
    model.eval()
    ids = torch.tensor([prompt])
    arrivals = TokenArrivals()
    with torch.no_grad():
        model.generate(ids, max_new_tokens=2, do_sample=False, pad_token_id=0)  # warm-up
        started = time.perf_counter()
        out = model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False, use_cache=True,
                             pad_token_id=0, streamer=arrivals)
    tokens = arrivals.times[1:]
    # As firebrand's side: tokens/s after the first token, and the first token's wait apart.
    return {"tokensPerSecond": (len(tokens) - 1) / (tokens[-1] - tokens[0]),
            "firstTokenMs": (tokens[0] - started) * 1000, "tokens": out[0, len(prompt):].tolist()}


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    if mode == "train":
        job, threads, steps, length = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
        torch.set_num_threads(threads)
        adapter = sys.argv[8] if len(sys.argv) > 8 else None
        print(json.dumps(train(folder, job, steps, length, sys.argv[7], adapter)))
    elif mode == "adapter":
        print(json.dumps(save_adapter(folder, sys.argv[3])))
    elif mode == "generate":
        torch.set_num_threads(int(sys.argv[3]))
        prompt = [int(token) for token in sys.argv[4].split(",")]
        print(json.dumps(generate(folder, prompt, int(sys.argv[5]), sys.argv[6])))
    elif mode == "load":
        torch.set_num_threads(int(sys.argv[3]))
        prompt = [int(token) for token in sys.argv[4].split(",")]
        print(json.dumps(load_to_logits(folder, prompt, sys.argv[5])))
    elif mode == "triad":
        torch.set_num_threads(int(folder))
        print(json.dumps(triad()))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
