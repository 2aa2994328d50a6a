#!/usr/bin/env python3
"""transformers' side of `npm run bench:pretrained` (run where python3-transformers is: the sid chroot).
Prints one JSON line.
  python3 pretrained_llama.py make <folder> <small|large>   (a Llama with seeded random weights, save_pretrained)
  python3 pretrained_llama.py load <folder>                 (from_pretrained: seconds, peak RSS)
  python3 pretrained_llama.py train <folder> <steps> <batch> <length>   (a plain PyTorch loop, AdamW: tokens/s)
  python3 pretrained_llama.py generate <folder> <prompt ids, comma-separated> <new>   (generate(do_sample=False), cache)
"""
import json
import resource
import sys
import time

import torch
import transformers

torch.set_num_threads(1)
# ~31M parameters (training and generation), and ~134M (536 MB in float32: the load's memory check).
CONFIGS = {
    "small": dict(vocab_size=8192, hidden_size=512, intermediate_size=1376, num_hidden_layers=8,
                  num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=1024),
    "large": dict(vocab_size=32000, hidden_size=768, intermediate_size=2048, num_hidden_layers=12,
                  num_attention_heads=12, num_key_value_heads=4, max_position_embeddings=2048),
}


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tokens(count, vocab, seed):
    return torch.randint(0, vocab, (count,), generator=torch.Generator().manual_seed(seed))


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    if mode == "make":
        torch.manual_seed(0)
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**CONFIGS[sys.argv[3]]))
        model.save_pretrained(folder)
        print(json.dumps({"parameters": sum(p.numel() for p in model.parameters())}))
        return
    started = time.perf_counter()
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    loaded = time.perf_counter() - started
    if mode == "load":
        print(json.dumps({"seconds": loaded, "peakRssMb": peak_rss_mb()}))
    elif mode == "train":
        steps, batch, length = (int(value) for value in sys.argv[3:6])
        vocab = model.config.vocab_size
        data = tokens((steps + 1) * batch * (length + 1), vocab, 1).view(steps + 1, batch, length + 1)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        model.train()

        def step(window):
            optimizer.zero_grad(set_to_none=True)
            logits = model(window[:, :-1]).logits
            loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), window[:, 1:])
            loss.backward()
            optimizer.step()
            return loss.item()

        step(data[0])  # warm-up
        started = time.perf_counter()
        for window in data[1:]:
            loss = step(window)
        seconds = time.perf_counter() - started
        print(json.dumps({"tokensPerSecond": steps * batch * length / seconds, "loss": loss}))
    elif mode == "generate":
        ids, new = torch.tensor([[int(token) for token in sys.argv[3].split(",")]]), int(sys.argv[4])
        prompt = ids.size(1)
        model.eval()
        with torch.no_grad():
            model.generate(ids, max_new_tokens=4, do_sample=False, pad_token_id=0)  # warm-up
            started = time.perf_counter()
            out = model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False, use_cache=True,
                                 pad_token_id=0)
            seconds = time.perf_counter() - started
        print(json.dumps({"tokensPerSecond": new / seconds, "tokens": out[0, prompt:].tolist()}))


if __name__ == "__main__":
    main()
