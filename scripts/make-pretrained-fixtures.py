"""Tiny random Hugging Face checkpoints and what transformers computes with them, for
test/pretrained.test.ts. Run in the sid chroot, where python3-transformers is (see README):

    python3 scripts/make-pretrained-fixtures.py

Each architecture gets test/fixtures/pretrained/<name>/ as save_pretrained writes it (config.json,
model.safetensors, generation_config.json) and golden.safetensors beside: the input ids, the logits
in eval mode ([batch, vocabulary, time], firebrand's layout) and the tokens generate(do_sample=False)
gives with its cache.
"""
import json
import pathlib
import shutil

import torch
import transformers
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent / "test" / "fixtures" / "pretrained"

# Weights drawn wider than transformers' 0.02 so that the logits, and greedy choices, are far apart.
COMMON = dict(vocab_size=64, initializer_range=0.3)
LLAMA = dict(COMMON, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6)
CASES = {
    "gpt2": (transformers.GPT2Config, transformers.GPT2LMHeadModel,
             dict(COMMON, n_positions=32, n_embd=16, n_layer=2, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0,
                  attn_pdrop=0.0, bos_token_id=1, eos_token_id=2)),
    "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM, dict(LLAMA, tie_word_embeddings=False)),
    "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM, dict(LLAMA, tie_word_embeddings=True)),
    # A window shorter than the inputs, so that it matters.
    "mistral": (transformers.MistralConfig, transformers.MistralForCausalLM,
                dict(LLAMA, tie_word_embeddings=False, sliding_window=4)),
}
INPUT_IDS = torch.tensor([[3, 17, 42, 5, 9, 60, 1, 33], [8, 8, 21, 54, 2, 47, 30, 11]])
NEW_TOKENS = 10


def write(seed, name, config_class, model_class, fields):
    torch.manual_seed(seed)
    config = config_class(**fields)
    model = model_class(config).eval()
    folder = OUT / name
    shutil.rmtree(folder, ignore_errors=True)
    model.save_pretrained(folder)
    with torch.no_grad():
        logits = model(INPUT_IDS).logits.transpose(1, 2).contiguous()
        generated = model.generate(INPUT_IDS[:1], max_new_tokens=NEW_TOKENS, do_sample=False, use_cache=True,
                                   pad_token_id=0, eos_token_id=None)[0, INPUT_IDS.size(1):]
    save_file({"input_ids": INPUT_IDS, "logits": logits, "generated": generated.contiguous()},
              str(OUT / f"{name}.golden.safetensors"),
              {"generatedBy": "scripts/make-pretrained-fixtures.py", "transformers": transformers.__version__,
               "torch": torch.__version__})
    print(f"wrote {folder} ({sum(p.numel() for p in model.parameters())} parameters), generated {generated.tolist()}")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for seed, (name, (config_class, model_class, fields)) in enumerate(CASES.items()):
        write(seed, name, config_class, model_class, fields)


if __name__ == "__main__":
    main()
