"""Tiny random Hugging Face checkpoints and what transformers computes with them, for
test/pretrained.test.ts. Run in the sid chroot, where python3-transformers is (see README):

    python3 scripts/make-pretrained-fixtures.py

Each architecture gets test/fixtures/pretrained/<name>/ as save_pretrained writes it (config.json,
model.safetensors, generation_config.json) and <name>.golden.safetensors beside: the inputs under
transformers' argument names (input_ids, attention_mask, token_type_ids, pixel_values), the target, the
logits in eval mode (a language model's as [batch, vocabulary, time], firebrand's layout), for causal LMs
the tokens generate(do_sample=False) gives with its cache, and training with cross-entropy on (inputs,
target): the gradients (grad.<name>), the weights after 3 AdamW steps (adamw3.<name>) and their losses.
"""
import json
import pathlib
import shutil
import tempfile

import torch
import transformers
from safetensors.torch import save_file
from transformers.core_model_loading import revert_weight_conversion

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent / "test" / "fixtures" / "pretrained"

# Weights drawn wider than transformers' 0.02 so that the logits, and greedy choices, are far apart.
COMMON = dict(vocab_size=64, initializer_range=0.3)
LLAMA = dict(COMMON, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6)
BERT = dict(COMMON, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=32, type_vocab_size=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            pad_token_id=0)
VIT = dict(initializer_range=0.3, image_size=8, patch_size=4, num_channels=3, hidden_size=16, intermediate_size=32,
           num_hidden_layers=2, num_attention_heads=4, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
           id2label={0: "cat", 1: "dog", 2: "fox"}, label2id={"cat": 0, "dog": 1, "fox": 2})

INPUT_IDS = torch.tensor([[3, 17, 42, 5, 9, 60, 1, 33], [8, 8, 21, 54, 2, 47, 30, 11]])
TARGETS = torch.tensor([[17, 42, 5, 9, 60, 1, 33, 7], [8, 21, 54, 2, 47, 30, 11, 19]])
# BERT's batch as its tokenizer gives it: the second sequence padded (pad id 0) after 5 tokens, two segments.
BERT_INPUTS = dict(input_ids=torch.tensor([[2, 17, 42, 5, 9, 60, 1, 3], [2, 8, 21, 54, 3, 0, 0, 0]]),
                   attention_mask=torch.tensor([[1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0, 0, 0]]),
                   token_type_ids=torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0, 0]]))
# Masked-LM targets: the original token where it was masked, -100 (ignored) elsewhere.
MLM_TARGETS = torch.tensor([[-100, -100, 11, -100, -100, 23, -100, -100], [-100, 40, -100, -100, -100, -100, -100, -100]])
PADDED_MASK = torch.tensor([[1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0, 0, 0]])
PADDED_IDS = INPUT_IDS.masked_fill(PADDED_MASK == 0, 0)
PADDED_TARGETS = TARGETS
PIXELS = torch.Generator().manual_seed(5)
PIXEL_VALUES = torch.rand(2, 3, 8, 8, generator=PIXELS) * 2 - 1


def causal_lm(config_class, model_class, fields):
    """A causal LM: input_ids alone, logits [batch, vocabulary, time], next tokens as targets, generation."""
    return dict(config=config_class(**fields), model_class=model_class, inputs=dict(input_ids=INPUT_IDS),
                target=TARGETS, logits=lambda output: output.logits.transpose(1, 2), generate=True)


CASES = {
    "gpt2": causal_lm(transformers.GPT2Config, transformers.GPT2LMHeadModel,
                      dict(COMMON, n_positions=32, n_embd=16, n_layer=2, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0,
                           attn_pdrop=0.0, bos_token_id=1, eos_token_id=2)),
    "llama": causal_lm(transformers.LlamaConfig, transformers.LlamaForCausalLM, dict(LLAMA, tie_word_embeddings=False)),
    "qwen2": causal_lm(transformers.Qwen2Config, transformers.Qwen2ForCausalLM, dict(LLAMA, tie_word_embeddings=True)),
    # A window shorter than the inputs, so that it matters.
    "mistral": causal_lm(transformers.MistralConfig, transformers.MistralForCausalLM,
                         dict(LLAMA, tie_word_embeddings=False, sliding_window=4)),
    # Rope scaling kinds, with the rotary dim (4) small enough that every branch of each kind is taken.
    "llama-rope-linear": causal_lm(transformers.LlamaConfig, transformers.LlamaForCausalLM,
                                   dict(LLAMA, rope_parameters=dict(rope_type="linear", rope_theta=10000.0, factor=4.0))),
    "llama-rope-llama3": causal_lm(transformers.LlamaConfig, transformers.LlamaForCausalLM,
                                   dict(LLAMA, rope_parameters=dict(rope_type="llama3", rope_theta=10000.0, factor=8.0,
                                                                    low_freq_factor=1.0, high_freq_factor=4.0,
                                                                    original_max_position_embeddings=16))),
    "llama-rope-yarn": causal_lm(transformers.LlamaConfig, transformers.LlamaForCausalLM,
                                 dict(LLAMA, rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=4.0,
                                                                  original_max_position_embeddings=16))),
    # The inputs (8 positions) reach past the original context (4): the long factors apply.
    "llama-rope-longrope": causal_lm(transformers.LlamaConfig, transformers.LlamaForCausalLM,
                                     dict(LLAMA, rope_parameters=dict(rope_type="longrope", rope_theta=10000.0,
                                                                      short_factor=[1.0, 1.5], long_factor=[2.0, 3.0],
                                                                      original_max_position_embeddings=4))),
    # Qwen2's window on the layers from max_window_layers on: layer 0 full, layer 1 windowed.
    "qwen2-sliding": causal_lm(transformers.Qwen2Config, transformers.Qwen2ForCausalLM,
                               dict(LLAMA, tie_word_embeddings=True, use_sliding_window=True, sliding_window=4,
                                    max_window_layers=1)),
    "bert-mlm": dict(config=transformers.BertConfig(**BERT), model_class=transformers.BertForMaskedLM,
                     inputs=BERT_INPUTS, target=MLM_TARGETS, logits=lambda output: output.logits.transpose(1, 2)),
    "bert-classifier": dict(config=transformers.BertConfig(**BERT, id2label={0: "no", 1: "yes", 2: "maybe"},
                                                           label2id={"no": 0, "yes": 1, "maybe": 2}),
                            model_class=transformers.BertForSequenceClassification, inputs=BERT_INPUTS,
                            target=torch.tensor([2, 0]), logits=lambda output: output.logits),
    "vit": dict(config=transformers.ViTConfig(**VIT), model_class=transformers.ViTForImageClassification,
                inputs=dict(pixel_values=PIXEL_VALUES), target=torch.tensor([1, 2]), logits=lambda output: output.logits),
    # A right-padded batch (the second sequence: 5 tokens, then padding), the padding out of the loss. The logits
    # at padding positions are zeroed (each implementation fills them its own way; nothing reads them).
    "llama-padded": dict(causal_lm(transformers.LlamaConfig, transformers.LlamaForCausalLM,
                                   dict(LLAMA, tie_word_embeddings=False)),
                         inputs=dict(input_ids=PADDED_IDS, attention_mask=PADDED_MASK),
                         target=PADDED_TARGETS.masked_fill(PADDED_MASK == 0, -100), generate=False, zeroes_padding=True,
                         logits=lambda output: output.logits.transpose(1, 2) * PADDED_MASK.unsqueeze(1)),
}


def adamw_eps(name):
    """GPT-2's key bias has an exact gradient of zero (it shifts every score of a query alike), so its
    computed gradient is rounding noise (~1e-7 at these weights), which Adam's default eps (1e-8) turns
    into steps of lr * noise / |noise|, different in every implementation; eps 1e-4 keeps those steps
    below 1e-6. The same holds for BERT's and ViT's key biases. The Llama family's rotary embeddings make
    its key biases' gradients real: its default eps."""
    return 1e-8 if name in ("llama", "qwen2", "mistral") else 1e-4


def train(model, case, eps):
    """Gradients of the first step, then the weights and losses of 3 AdamW steps (lr 1e-3, `eps`)."""
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    model.train()
    loss_of = lambda: torch.nn.functional.cross_entropy(case["logits"](model(**case["inputs"])), case["target"])
    loss_of().backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, eps=eps)
    losses = []
    for _ in range(3):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    trained = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(initial)
    model.eval()
    return grads, trained, losses
NEW_TOKENS = 10


def write(seed, name, case):
    torch.manual_seed(seed)
    model = case["model_class"](case["config"]).eval()
    folder = OUT / name
    shutil.rmtree(folder, ignore_errors=True)
    model.save_pretrained(folder)
    tensors = dict(case["inputs"], target=case["target"])
    with torch.no_grad():
        tensors["logits"] = case["logits"](model(**case["inputs"])).contiguous()
        if case.get("generate"):
            generated = model.generate(INPUT_IDS[:1], max_new_tokens=NEW_TOKENS, do_sample=False, use_cache=True,
                                       pad_token_id=0, eos_token_id=None)[0, INPUT_IDS.size(1):]
            tensors["generated"] = generated.contiguous()
    grads, trained, losses = train(model, case, adamw_eps(name))
    # Under the names save_pretrained writes (transformers 5 renames ViT's modules in memory).
    grads, trained = (revert_weight_conversion(model, tensors) for tensors in (grads, trained))
    tensors.update({f"grad.{k}": v for k, v in grads.items()})
    # Tied weights are one tensor under two names: safetensors stores each name's own copy.
    tensors.update({f"adamw3.{k}": v.contiguous().clone() for k, v in trained.items()})
    save_file(tensors, str(OUT / f"{name}.golden.safetensors"),
              {"generatedBy": "scripts/make-pretrained-fixtures.py", "transformers": transformers.__version__,
               "torch": torch.__version__, "adamw3_losses": json.dumps(losses),
               "adamw_eps": repr(adamw_eps(name)), "logitsAtPaddingZeroed": json.dumps(bool(case.get("zeroes_padding")))})
    print(f"wrote {folder} ({sum(p.numel() for p in model.parameters())} parameters)"
          + (f", generated {tensors['generated'].tolist()}" if "generated" in tensors else ""))


CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\\n' + message['content'] + eos_token + '\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
)
CONVERSATIONS = [
    [{"role": "user", "content": "The quick brown fox?"}],
    [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "What does the fox do?"},
     {"role": "assistant", "content": "It jumps over the lazy dog."}, {"role": "user", "content": "And the dog?"}],
]


def write_chat_tokenizer():
    """chat-tokenizer/: the llama-style tokenizer of test/fixtures/tokenizers with special tokens and a chat
    template, as save_pretrained writes them; chat-tokenizer.golden.json: apply_chat_template's text and ids."""
    source = HERE.parent / "test" / "fixtures" / "tokenizers" / "llama-style" / "tokenizer.json"
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=str(source), bos_token="<s>", eos_token="</s>",
                                                     unk_token="<unk>", chat_template=CHAT_TEMPLATE)
    folder = OUT / "chat-tokenizer"
    shutil.rmtree(folder, ignore_errors=True)
    tokenizer.save_pretrained(folder)
    cases = []
    for messages in CONVERSATIONS:
        for add_generation_prompt in (False, True):
            text = tokenizer.apply_chat_template(messages, add_generation_prompt=add_generation_prompt, tokenize=False)
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            cases.append({"messages": messages, "addGenerationPrompt": add_generation_prompt, "text": text, "ids": ids})
    golden = {"generatedBy": "scripts/make-pretrained-fixtures.py", "transformers": transformers.__version__,
              "bosTokenId": tokenizer.bos_token_id, "eosTokenId": tokenizer.eos_token_id, "cases": cases}
    (OUT / "chat-tokenizer.golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {folder}: {sorted(p.name for p in folder.iterdir())}")


# CHAT_TEMPLATE with transformers' {% generation %} marks around each assistant message's text and end of turn.
TAGGED_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' }}"
    "{% if message['role'] == 'assistant' %}{% generation %}{{ message['content'] + eos_token + '\\n' }}"
    "{% endgeneration %}{% else %}{{ message['content'] + eos_token + '\\n' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
)
MASKED_CONVERSATIONS = [
    CONVERSATIONS[1] + [{"role": "assistant", "content": "It sleeps in the sun, café au lait."}],
    [{"role": "user", "content": "Count to three."}, {"role": "assistant", "content": "One, two, three."},
     {"role": "user", "content": "And back?"}, {"role": "assistant", "content": "Three, two, one."}],
]


def write_assistant_masks():
    """chat-tokenizer-masks.golden.json: apply_chat_template(return_assistant_tokens_mask=True)'s ids and masks
    with the chat tokenizer and TAGGED_CHAT_TEMPLATE (CHAT_TEMPLATE with {% generation %} marks)."""
    tokenizer = transformers.PreTrainedTokenizerFast.from_pretrained(OUT / "chat-tokenizer")
    cases = []
    for messages in MASKED_CONVERSATIONS:
        out = tokenizer.apply_chat_template(messages, chat_template=TAGGED_CHAT_TEMPLATE, tokenize=True,
                                            return_dict=True, return_assistant_tokens_mask=True)
        cases.append({"messages": messages, "ids": list(out["input_ids"]), "assistantMasks": list(out["assistant_masks"])})
    golden = {"generatedBy": "scripts/make-pretrained-fixtures.py", "transformers": transformers.__version__,
              "taggedTemplate": TAGGED_CHAT_TEMPLATE, "cases": cases}
    (OUT / "chat-tokenizer-masks.golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote chat-tokenizer-masks.golden.json: {[sum(case['assistantMasks']) for case in cases]} assistant tokens")


# A template reading what transformers passes besides the messages: tools (as JSON), documents, a variable
# of the caller's (enable_thinking), content parts; and a reply left open (continue_final_message).
EXTRAS_CHAT_TEMPLATE = (
    "{%- if tools %}{{ '<|tools|>\\n' }}{% for tool in tools %}{{ tool | tojson }}{{ '\\n' }}{% endfor %}{% endif %}"
    "{%- if documents %}{% for doc in documents %}{{ '<|doc|>' + doc['title'] + ': ' + doc['text'] + '\\n' }}"
    "{% endfor %}{% endif %}"
    "{{- bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' }}"
    "{%- if message['content'] is string %}{{ message['content'] }}{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% else %}{{ '<|' + part['type'] + '|>' }}{% endif %}"
    "{% endfor %}{% endif %}{{ eos_token + '\\n' }}{% endfor %}"
    "{%- if add_generation_prompt %}{{ '<|assistant|>\\n' }}"
    "{%- if enable_thinking is defined and not enable_thinking %}{{ '<think></think>' }}{% endif %}{% endif %}"
)
TOOL = {"type": "function", "function": {"name": "fox_speed", "description": "How fast a fox runs, in km/h.",
                                         "parameters": {"type": "object", "properties": {"breed": {"type": "string"}},
                                                        "required": ["breed"]}}}
EXTRAS_CASES = [
    {"messages": [{"role": "user", "content": "How fast is a red fox?"}], "tools": [TOOL],
     "addGenerationPrompt": True},
    {"messages": [{"role": "user", "content": "What does the fox do?"}],
     "documents": [{"title": "Fox", "text": "The quick brown fox jumps."}], "chatTemplateKwargs": {"enable_thinking": False},
     "addGenerationPrompt": True},
    {"messages": [{"role": "user", "content": [{"type": "text", "text": "Look: "}, {"type": "image"},
                                               {"type": "text", "text": "a café"}]}], "addGenerationPrompt": True},
    {"messages": [{"role": "user", "content": "Name the fox."}, {"role": "assistant", "content": "The quick brown"}],
     "continueFinalMessage": True},
    {"messages": [{"role": "user", "content": "Name the fox."},
                  {"role": "assistant", "content": [{"type": "text", "text": "It is called "}]}],
     "continueFinalMessage": True},
]


def write_chat_template_extras():
    """chat-tokenizer-extras.golden.json: apply_chat_template's text and ids with EXTRAS_CHAT_TEMPLATE for
    tools, documents, a template variable, content parts and continue_final_message."""
    tokenizer = transformers.PreTrainedTokenizerFast.from_pretrained(OUT / "chat-tokenizer")
    cases = []
    for case in EXTRAS_CASES:
        text = tokenizer.apply_chat_template(
            case["messages"], chat_template=EXTRAS_CHAT_TEMPLATE, tools=case.get("tools"),
            documents=case.get("documents"), add_generation_prompt=case.get("addGenerationPrompt", False),
            continue_final_message=case.get("continueFinalMessage", False), tokenize=False,
            **case.get("chatTemplateKwargs", {}))
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        cases.append({**case, "text": text, "ids": ids})
    golden = {"generatedBy": "scripts/make-pretrained-fixtures.py", "transformers": transformers.__version__,
              "template": EXTRAS_CHAT_TEMPLATE, "cases": cases}
    (OUT / "chat-tokenizer-extras.golden.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote chat-tokenizer-extras.golden.json: {[case['text'][-20:] for case in cases]}")


def write_example_checkpoint():
    """examples/data/tiny-chat-llama/: a tiny random Llama whose vocabulary is the chat tokenizer's, with that
    tokenizer beside it, for examples/finetune-llama.ts."""
    folder = HERE.parent / "examples" / "data" / "tiny-chat-llama"
    shutil.rmtree(folder, ignore_errors=True)
    tokenizer = transformers.PreTrainedTokenizerFast.from_pretrained(OUT / "chat-tokenizer")
    torch.manual_seed(10)
    config = transformers.LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=256, bos_token_id=tokenizer.bos_token_id,
                                      eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=True)
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    print(f"wrote {folder}: {sorted(p.name for p in folder.iterdir())}")


def greedy_margin(model):
    """generate(do_sample=False)'s tokens, and the smallest gap between the best and second-best logit
    over its steps: bfloat16 logits are coarse, so near ties would make greedy parity a matter of rounding."""
    out = model.generate(INPUT_IDS[:1], max_new_tokens=NEW_TOKENS, do_sample=False, use_cache=True, pad_token_id=0,
                         eos_token_id=None, return_dict_in_generate=True, output_scores=True)
    gaps = [float(step[0].float().topk(2).values.diff().abs()) for step in out.scores]
    return out.sequences[0, INPUT_IDS.size(1):].contiguous(), min(gaps)


def write_bfloat16_checkpoint():
    """llama-bf16/: a tiny Llama saved in bfloat16 (config.json's dtype), and llama-bf16.golden.safetensors:
    what from_pretrained's default (dtype 'auto': bfloat16) computes with it: the logits (and how far its eager
    attention's lie from them), the greedy tokens
    (the first seed from 100 whose greedy choices are 0.2 apart, over 12 bfloat16 steps at these logits), and
    3 AdamW steps (losses, weights) with the loss over float32 logits, as transformers' own loss takes them.
    AdamW's eps is 1e-3: bfloat16 gradients carry rounding noise of ~2^-8 of their size, which Adam's
    normalized step would turn into full steps of lr where a gradient is near zero (see adamw_eps)."""
    folder = OUT / "llama-bf16"
    for seed in range(100, 200):
        torch.manual_seed(seed)
        shutil.rmtree(folder, ignore_errors=True)
        transformers.LlamaForCausalLM(transformers.LlamaConfig(**LLAMA)).to(torch.bfloat16).save_pretrained(folder)
        model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
        assert next(model.parameters()).dtype == torch.bfloat16
        with torch.no_grad():
            generated, margin = greedy_margin(model)
        if margin >= 0.2:
            break
    tensors = dict(input_ids=INPUT_IDS, target=TARGETS, generated=generated)
    with torch.no_grad():
        tensors["logits"] = model(INPUT_IDS).logits.transpose(1, 2).float().contiguous()
        # How far transformers' own attention implementations (sdpa, the default, and eager) round apart in
        # bfloat16: the precision at which another implementation can be held to these logits.
        eager = transformers.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
        spread = (eager(INPUT_IDS).logits.transpose(1, 2).float() - tensors["logits"]).abs().max().item()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, eps=1e-3)
    losses = []
    for _ in range(3):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(INPUT_IDS).logits.float().transpose(1, 2), TARGETS)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    tensors.update({f"adamw3.{k}": v.float().contiguous().clone() for k, v in model.state_dict().items()})
    save_file(tensors, str(OUT / "llama-bf16.golden.safetensors"),
              {"generatedBy": "scripts/make-pretrained-fixtures.py", "transformers": transformers.__version__,
               "torch": torch.__version__, "seed": str(seed), "greedyMargin": repr(margin),
               "eagerSdpaSpread": repr(spread),
               "adamw_eps": "1e-3", "adamw3_losses": json.dumps(losses)})
    print(f"wrote {folder} (seed {seed}, greedy margin {margin}, eager-sdpa spread {spread}), generated {generated.tolist()}, losses {losses}")


PEFT_TARGETS = ["q_proj", "v_proj"]


def save_peft_folder(model, folder):
    """PEFT's save_pretrained into `folder` afresh, without its README.md model card and with no
    base_model_name_or_path (the base's path here means nothing elsewhere)."""
    shutil.rmtree(folder, ignore_errors=True)
    model.save_pretrained(folder)
    (folder / "README.md").unlink(missing_ok=True)
    config_file = folder / "adapter_config.json"
    config_file.write_text(json.dumps(dict(json.loads(config_file.read_text()), base_model_name_or_path=None),
                                      indent=2))


def write_peft_adapter():
    """<base>-peft-adapter/: LoRA adapters as PEFT's save_pretrained writes them (adapter_config.json, with no
    base_model_name_or_path, and adapter_model.safetensors; PEFT's README.md model card left out), r 4, alpha 8
    on q_proj and v_proj, with init_lora_weights=False so that lora_B is not zero and the adapters change the
    logits; and <base>-peft-adapter.golden.safetensors: the logits of PEFT's PeftModel over INPUT_IDS. Bases:
    qwen2, and llama-bf16, loaded in bfloat16 as from_pretrained does by default, whose adapters PEFT keeps in
    float32 (autocast_adapter_dtype), with how far transformers' eager and sdpa attention round apart there.
    Debian packages no peft: put its source on PYTHONPATH (github.com/huggingface/peft, src/); without it
    the committed fixtures stay as they are."""
    try:
        import peft
    except ImportError as error:
        print(f"kept the committed PEFT adapters: {error} (put peft's src/ on PYTHONPATH)")
        return
    for seed, base_name in ((40, "qwen2"), (41, "llama-bf16")):
        def adapted(attention):
            base = transformers.AutoModelForCausalLM.from_pretrained(OUT / base_name, attn_implementation=attention)
            torch.manual_seed(seed)
            config = peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=PEFT_TARGETS,
                                     init_lora_weights=False)
            return peft.get_peft_model(base.eval(), config).eval()

        model = adapted("sdpa")
        folder = OUT / f"{base_name}-peft-adapter"
        save_peft_folder(model, folder)
        with torch.no_grad():
            logits = model(input_ids=INPUT_IDS).logits.transpose(1, 2).float().contiguous()
            spread = (adapted("eager")(input_ids=INPUT_IDS).logits.transpose(1, 2).float() - logits).abs().max().item()
        save_file(dict(input_ids=INPUT_IDS, logits=logits), str(OUT / f"{base_name}-peft-adapter.golden.safetensors"),
                  {"generatedBy": "scripts/make-pretrained-fixtures.py", "peft": peft.__version__,
                   "transformers": transformers.__version__, "torch": torch.__version__,
                   "baseDtype": str(next(model.parameters()).dtype), "eagerSdpaSpread": repr(spread)})
        print(f"wrote {folder} with peft {peft.__version__} (eager-sdpa spread {spread})")


def write_dora_adapter():
    """qwen2-dora-adapter/: a DoRA adapter (use_dora=True: lora_magnitude_vector beside lora_A and lora_B) as
    PEFT's save_pretrained writes it, r 4, alpha 8 on q_proj and v_proj, init_lora_weights=False and the
    magnitudes moved off their initial norms, so that both change the logits; and
    qwen2-dora-adapter.golden.safetensors: PeftModel's logits over INPUT_IDS, adapted and merged
    (merge_and_unload). Needs peft's source on PYTHONPATH, as write_peft_adapter."""
    try:
        import peft
    except ImportError as error:
        print(f"kept the committed DoRA adapter: {error} (put peft's src/ on PYTHONPATH)")
        return
    base = transformers.AutoModelForCausalLM.from_pretrained(OUT / "qwen2").eval()
    torch.manual_seed(42)
    config = peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=PEFT_TARGETS,
                             init_lora_weights=False, use_dora=True)
    model = peft.get_peft_model(base, config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_magnitude_vector" in name:
                parameter.mul_(1 + 0.2 * torch.rand_like(parameter))
    folder = OUT / "qwen2-dora-adapter"
    save_peft_folder(model, folder)
    with torch.no_grad():
        logits = model(input_ids=INPUT_IDS).logits.transpose(1, 2).float().contiguous()
        merged = model.merge_and_unload()(input_ids=INPUT_IDS).logits.transpose(1, 2).float().contiguous()
    save_file(dict(input_ids=INPUT_IDS, logits=logits, merged=merged),
              str(OUT / "qwen2-dora-adapter.golden.safetensors"),
              {"generatedBy": "scripts/make-pretrained-fixtures.py", "peft": peft.__version__,
               "transformers": transformers.__version__, "torch": torch.__version__})
    print(f"wrote {folder} with peft {peft.__version__}: {sorted(safe_open_keys(folder))[:3]}")


def safe_open_keys(folder):
    from safetensors import safe_open
    with safe_open(str(folder / "adapter_model.safetensors"), "pt") as f:
        return list(f.keys())


def write_batch_generation():
    """llama-batch-generation.golden.json: generate(do_sample=False) on prompts of three lengths decoded
    together, left-padded as transformers pads for generation (pad id 0, attention_mask 0 there), by the llama
    fixture's checkpoint: once with no end of sequence, once with an eos_token_id that one sequence gives
    early (transformers then pads that sequence with pad_token_id)."""
    prompts = [[3, 17, 42, 5, 9, 60, 1, 33], [8, 21, 54], [40, 2, 7, 11, 19]]
    longest = max(len(p) for p in prompts)
    ids = torch.tensor([[0] * (longest - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (longest - len(p)) + [1] * len(p) for p in prompts])
    model = transformers.AutoModelForCausalLM.from_pretrained(OUT / "llama").eval()

    def generate(eos):
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False,
                                 use_cache=True, pad_token_id=0, eos_token_id=eos)
        return out[:, longest:].tolist()

    generated = generate(None)
    eos = generated[1][3]  # the second prompt's fourth token ends it
    golden = {"generatedBy": "scripts/make-pretrained-fixtures.py", "transformers": transformers.__version__,
              "prompts": prompts, "maxNewTokens": NEW_TOKENS, "generated": generated, "eos": eos, "pad": 0,
              "generatedWithEos": generate(eos)}
    (OUT / "llama-batch-generation.golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote llama-batch-generation.golden.json: {generated}")


def write_generation_config_cases():
    """llama-generation-config.golden.json: generate() with no arguments but the prompt on copies of the llama
    fixture with a generation_config.json each: transformers takes every default from that file (greedy unless
    do_sample, top_k, temperature, repetition_penalty, no_repeat_ngram_size, min_p, max_new_tokens,
    eos_token_id)."""
    greedy = model_tokens(OUT / "llama", {})
    configs = [
        {"do_sample": False, "max_new_tokens": 8, "repetition_penalty": 1.5},
        {"do_sample": True, "top_k": 1, "temperature": 0.7, "max_new_tokens": 8},
        {"max_new_tokens": 8, "eos_token_id": [greedy[1], 63]},
        {"max_new_tokens": 6},
        {"do_sample": False, "max_new_tokens": 16, "no_repeat_ngram_size": 2},
        # min_p 1 keeps the most likely token alone: sampling gives the greedy tokens.
        {"do_sample": True, "min_p": 1.0, "temperature": 0.9, "max_new_tokens": 8},
    ]
    cases = [{"generationConfig": config, "generated": model_tokens(OUT / "llama", config)} for config in configs]
    greedy16 = model_tokens(OUT / "llama", {"max_new_tokens": 16})
    assert cases[4]["generated"] != greedy16, "no_repeat_ngram_size 2 changes nothing: pick another case"
    golden = {"generatedBy": "scripts/make-pretrained-fixtures.py", "transformers": transformers.__version__,
              "prompt": INPUT_IDS[0].tolist(), "cases": cases}
    (OUT / "llama-generation-config.golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote llama-generation-config.golden.json: {[case['generated'] for case in cases]}")


def write_generation_logprobs():
    """llama-logprobs.golden.json: generate(do_sample=False, output_logits=True) on the llama fixture, and each
    chosen token's log-probability under the model's raw logits (log_softmax of output_logits, vLLM's
    default raw_logprobs), for a single prompt and for a padded batch of two."""
    model = transformers.AutoModelForCausalLM.from_pretrained(OUT / "llama").eval()
    prompts = [INPUT_IDS[0].tolist(), [8, 21, 54]]
    longest = max(len(p) for p in prompts)
    ids = torch.tensor([[0] * (longest - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (longest - len(p)) + [1] * len(p) for p in prompts])
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=8, do_sample=False, pad_token_id=0,
                             eos_token_id=None, output_logits=True, return_dict_in_generate=True)
    generated = out.sequences[:, longest:]
    logprobs = torch.stack([torch.log_softmax(step.float(), -1) for step in out.logits], 1)
    chosen = logprobs.gather(2, generated.unsqueeze(2)).squeeze(2)
    golden = {"generatedBy": "scripts/make-pretrained-fixtures.py", "transformers": transformers.__version__,
              "prompts": prompts, "generated": generated.tolist(), "logprobs": chosen.tolist()}
    (OUT / "llama-logprobs.golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote llama-logprobs.golden.json: {generated.tolist()}")


def model_tokens(source, generation_config):
    """generate(prompt) on a copy of `source` whose generation_config.json is `generation_config` (none: {})."""
    with tempfile.TemporaryDirectory() as folder:
        for name in ("config.json", "model.safetensors"):
            shutil.copy(source / name, folder)
        if generation_config:
            (pathlib.Path(folder) / "generation_config.json").write_text(json.dumps(generation_config))
        model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
        with torch.no_grad():
            out = model.generate(INPUT_IDS[:1], max_new_tokens=generation_config.get("max_new_tokens", NEW_TOKENS))
        return out[0, INPUT_IDS.size(1):].tolist()


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    write_chat_tokenizer()
    write_assistant_masks()
    write_chat_template_extras()
    write_example_checkpoint()
    for seed, (name, case) in enumerate(CASES.items()):
        write(seed, name, case)
    write_batch_generation()
    write_generation_config_cases()
    write_generation_logprobs()
    write_bfloat16_checkpoint()
    write_peft_adapter()
    write_dora_adapter()


if __name__ == "__main__":
    main()
