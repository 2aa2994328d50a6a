#!/usr/bin/python3
"""Writes test/fixtures/modules/<model>.safetensors: models that test/modules-golden.test.ts
writes again as TypeScript modules, run by PyTorch itself (Debian's python3-torch), and
layers.safetensors: every layer of nn.* beyond the first seventeen, for test/layers-golden.test.ts.

Each file holds, by prefix:
  initial.<key>   the state dict PyTorch builds after torch.manual_seed(SEED) (the TS
                  model built with the same seed must draw the same weights)
  input, target   one batch
  eval_output     the model's output in eval mode on `input`, from the initial weights
  grad.<name>     each parameter's gradient of the mean cross-entropy, train mode
  adamw3.<key>    the state dict after three AdamW steps (lr 1e-3, PyTorch's defaults; eps in adamw_eps)
                  on the batch, BatchNorm buffers included
Metadata: the three losses (adamw3_losses).
Run: /usr/bin/python3 scripts/make-module-fixtures.py
With --version-dependent it writes only the models whose numbers depend on the version's kernels
(the U-Net: GroupNorm and transposed convolutions move its three AdamW steps by 3e-5 between 1.13
and 2.14) to test/fixtures/torch-<major.minor>/modules/, for that python3-torch's libtorch (2.14:
run it in the sid chroot of scripts/ci-libtorch-latest.sh).
With --live <model> <folder> <threads> it writes that model's file into <folder>, computed with that many
threads: test/modules-golden.test.ts does so for the models in LIVE, whose numbers also depend on the CPU.
"""
import sys
import importlib.util
import json
import math
import pathlib

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 0
HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("golden", HERE / "make-golden-fixtures.py")
golden = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or in_planes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class ResNet18(nn.Module):
    """torchvision's resnet18 layout with a CIFAR stem (3x3 conv, no max pool) and a width of `width`."""

    def __init__(self, width=8, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        planes, layers = width, []
        for index, (mult, stride) in enumerate([(1, 1), (2, 2), (4, 2), (8, 2)]):
            blocks = [BasicBlock(planes, width * mult, stride), BasicBlock(width * mult, width * mult)]
            planes = width * mult
            setattr(self, f"layer{index + 1}", nn.Sequential(*blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(planes, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class DoubleConv(nn.Module):
    def __init__(self, in_channels, out_channels, groups=4):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, padding=1), nn.GroupNorm(groups, out_channels), nn.SiLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1), nn.GroupNorm(groups, out_channels), nn.SiLU())

    def forward(self, x):
        return self.block(x)


class UNet(nn.Module):
    """A two-level U-Net: max-pool down, transposed-convolution up, skips concatenated, GroupNorm."""

    def __init__(self, in_channels=3, classes=2, width=8):
        super().__init__()
        self.enc1 = DoubleConv(in_channels, width)
        self.enc2 = DoubleConv(width, 2 * width)
        self.bottleneck = DoubleConv(2 * width, 4 * width)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
        self.dec2 = DoubleConv(4 * width, 2 * width)
        self.up1 = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.dec1 = DoubleConv(2 * width, width)
        self.head = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bottleneck(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.head(d1)


class TiedLM(nn.Module):
    """Embedding and output head as one tensor, tied in nanoGPT's direction (test/models/tied-lm.ts)."""

    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.embed.weight = self.head.weight

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + F.gelu(self.mix(x))
        return self.head(self.norm(x)).transpose(1, 2)


def rms_norm(x, normalized_shape, weight=None, eps=None):
    """F.rms_norm, which PyTorch has from 2.4; before it, its formula."""
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, normalized_shape, weight, eps)
    eps = eps if eps is not None else torch.finfo(x.dtype).eps
    dims = tuple(range(-len(normalized_shape), 0))
    out = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return out * weight if weight is not None else out


class RotaryEmbedding(nn.Module):
    """transformers' LlamaRotaryEmbedding with the default rope: cos and sin of positions x inv_freq."""

    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.attention_scaling = 1.0

    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    """transformers' rotate_half."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """transformers' apply_rotary_pos_emb."""
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class Functional(nn.Module):
    """F's convolutions and poolings of every dimension, the norms and ops added since, each an output (test/models/functional.ts)."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.empty(6, 4, 3))
        self.w2 = nn.Parameter(torch.empty(4, 2, 3, 3))
        self.w3 = nn.Parameter(torch.empty(2, 4, 3, 3, 3))
        self.b1 = nn.Parameter(torch.empty(6))
        self.g = nn.Parameter(torch.empty(16))
        for weight in (self.w1, self.w2, self.w3, self.b1, self.g):
            nn.init.normal_(weight)
        self.rotary = RotaryEmbedding(4)
        self.register_buffer("keep", torch.ones(4, 4).tril().bool())

    def forward(self, x):  # [2, 4, 16]
        x2 = x.view(2, 4, 4, 4)
        x3 = x.view(2, 4, 2, 2, 4)
        # x2 as [batch, heads, positions, head dim] for rotary embeddings.
        cos, sin = self.rotary(x2, torch.arange(x2.size(2))[None])
        q, k = apply_rotary_pos_emb(x2, x2.sin(), cos, sin)
        return {
            "conv1d": F.conv1d(x, self.w1, self.b1, stride=2, padding=1),
            "conv2d": F.conv2d(x2, self.w2, None, padding=(1, 0), dilation=(2, 1), groups=2),
            "conv3d": F.conv3d(x3, self.w3, None, padding=1),
            "maxPool1d": F.max_pool1d(x, 3, stride=2, padding=1),
            "maxPool2d": F.max_pool2d(x2, 3, stride=1, padding=1, dilation=1, ceil_mode=True),
            "maxPool3d": F.max_pool3d(x3, 2),
            "avgPool1d": F.avg_pool1d(x, 4, stride=3, padding=1, count_include_pad=False),
            "avgPool2d": F.avg_pool2d(x2, 2, ceil_mode=True),
            "avgPool3d": F.avg_pool3d(x3, (1, 2, 2)),
            "adaptiveAvgPool1d": F.adaptive_avg_pool1d(x, 5),
            "adaptiveAvgPool2d": F.adaptive_avg_pool2d(x2, (3, 2)),
            "adaptiveAvgPool3d": F.adaptive_avg_pool3d(x3, 1),
            "attention": attention(x2, x2.sin(), x2.cos()),
            "attentionCausal": attention(x2, x2.sin(), x2.cos(), is_causal=True, scale=0.3),
            "attentionBoolMask": attention(x2, x2.sin(), x2.cos(), attn_mask=self.keep),
            "attentionFloatMask": attention(x2, x2.sin(), x2.cos(), attn_mask=x2.tanh()),
            "attentionWindow": attention(x2, x2.sin(), x2.cos(), attn_mask=sliding_window_keep(x2.size(-2), 2), scale=0.3),
            "cumsum": x.cumsum(-1),
            "rmsNorm": rms_norm(x, [16], self.g, 1e-6),
            "rmsNormNoWeight": rms_norm(x2, [4, 4]),
            "rotaryCos": cos,
            "rotarySin": sin,
            "rotaryQ": q,
            "rotaryK": k,
        }


class LSTMClassifier(nn.Module):
    """Tokens through a 2-layer bidirectional LSTM; the last layer's final states of both directions classify (test/models/recurrent.ts)."""

    def __init__(self, vocab=12, dim=8, hidden=6, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.embed(tokens))
        return self.head(torch.cat([h[-2], h[-1]], 1) + out.mean(1) + c[-1].sum(1, keepdim=True))


class GRURegressor(nn.Module):
    """A GRU over [L, N, features] from an initial state made of the input, and a tanh RNN after it (test/models/recurrent.ts)."""

    def __init__(self, features=5, hidden=7, classes=3):
        super().__init__()
        self.init = nn.Linear(features, hidden)
        self.gru = nn.GRU(features, hidden)
        self.rnn = nn.RNN(hidden, hidden, nonlinearity="relu", num_layers=2)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):  # [N, L, features]
        h0 = torch.tanh(self.init(x.mean(1))).unsqueeze(0)
        out, h = self.gru(x.transpose(0, 1), h0)
        out, _ = self.rnn(out)
        return self.head(out.mean(0) + h[0])


def sliding_window_keep(time, window):
    """transformers' sliding-window causal mask: query i sees key j when i - window < j <= i."""
    back = torch.arange(time)[:, None] - torch.arange(time)[None, :]
    return (back >= 0) & (back < window)


def attention(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """torch.nn.functional.scaled_dot_product_attention's reference formula (python3-torch 1.13 lacks the function)."""
    weights = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.size(-1)) if scale is None else scale)
    if is_causal:
        keep = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).tril()
        weights = weights.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        weights = weights.masked_fill(attn_mask.logical_not(), float("-inf")) if attn_mask.dtype == torch.bool else weights + attn_mask
    return torch.softmax(weights, -1) @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.heads = heads

    def forward(self, x):
        batch, time, dim = x.shape
        q, k, v = (t.view(batch, time, self.heads, dim // self.heads).transpose(1, 2) for t in self.c_attn(x).split(dim, dim=2))
        y = attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(batch, time, dim)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPTMini(nn.Module):
    """nanoGPT's model at toy size: token and learned position embeddings, pre-norm causal blocks, a tied head
    and nanoGPT's initialisation (test/models/gpt.ts)."""

    def __init__(self, vocab=16, context=8, dim=16, heads=2, layers=2):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, dim),
            wpe=nn.Embedding(context, dim),
            h=nn.ModuleList([Block(dim, heads) for _ in range(layers)]),
            ln_f=nn.LayerNorm(dim),
        ))
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for name, parameter in self.named_parameters():
            if name.endswith("c_proj.weight"):
                torch.nn.init.normal_(parameter, mean=0.0, std=0.02 / math.sqrt(2 * layers))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, tokens):
        positions = torch.arange(tokens.size(1))
        x = self.transformer.wte(tokens) + self.transformer.wpe(positions)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x)).transpose(1, 2)


class AttentionClassifier(nn.Module):
    """nn.MultiheadAttention twice (test/models/attention.ts): batch-first self-attention with a key padding
    mask (token 0 after the first position) and a causal attn_mask, then sequence-first cross-attention
    without biases that also returns its head-averaged weights."""

    def __init__(self, vocab=12, dim=8, heads=2, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.cross = nn.MultiheadAttention(dim, heads, bias=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        x = self.embed(tokens)
        length = tokens.size(1)
        pad = (tokens == 0) * (torch.arange(length) > 0)
        causal = torch.full([length, length], 1, dtype=torch.bool).triu(1)
        y, _ = self.attn(x, x, x, key_padding_mask=pad, attn_mask=causal, need_weights=False)
        z, weights = self.cross(y.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))
        return self.head(z.mean(0) + weights.sum(-1).mean(-1, keepdim=True))


class TransformerModel(nn.Module):
    """nn.TransformerEncoder (two copies of a post-norm layer, a final norm) under a key padding mask, and a
    pre-norm gelu nn.TransformerDecoderLayer with a causal mask over its memory (test/models/transformer.ts)."""

    def __init__(self, vocab=12, dim=8, heads=2, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=16, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(dim))
        self.decoder = nn.TransformerDecoderLayer(dim, heads, dim_feedforward=16, dropout=0.0, activation="gelu", norm_first=True)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        x = self.embed(tokens).transpose(0, 1)
        length = tokens.size(1)
        pad = (tokens == 0) * (torch.arange(length) > 0)
        memory = self.encoder(x, src_key_padding_mask=pad)
        causal = torch.full([length, length], 1, dtype=torch.bool).triu(1)
        y = self.decoder(x, memory, tgt_mask=causal, memory_key_padding_mask=pad)
        return self.head(y.mean(0))


class PackedRecurrent(nn.Module):
    """Variable-length sequences through pack_padded_sequence (test/models/recurrent.ts): a bidirectional
    batch-first LSTM and a sequence-first GRU, each sequence's length taken from its first token."""

    def __init__(self, vocab=12, dim=6, hidden=5, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hidden, hidden)
        self.head = nn.Linear(3 * hidden, classes)

    def forward(self, tokens):
        first = tokens[:, 0]
        lengths = tokens.size(1) - (first > 5).long() - (first > 9).long()
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        out, (h, _) = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=tokens.size(1))
        packed = nn.utils.rnn.pack_padded_sequence(out.transpose(0, 1), lengths, enforce_sorted=False)
        deep, last = self.gru(packed)
        deep, _ = nn.utils.rnn.pad_packed_sequence(deep, total_length=tokens.size(1))
        return self.head(torch.cat([h[0] + h[1], last[0], deep.sum(0)], 1))


def write_functional():
    torch.manual_seed(SEED)
    model = Functional().eval()
    inputs = torch.randn(2, 4, 16, generator=torch.Generator().manual_seed(1234))
    with torch.no_grad():
        outputs = model(inputs)
    tensors = {"input": inputs, **{f"output.{name}": value for name, value in outputs.items()}}
    out = HERE.parent / "test" / "fixtures" / "modules" / "functional.safetensors"
    golden.write_safetensors(out, tensors, {"generatedBy": "scripts/make-module-fixtures.py", "torchVersion": torch.__version__,
                                             "outputs": json.dumps(list(outputs))})
    print(f"wrote {out}")


def with_lora(model, targets, r, alpha):
    """A hand-written LoRA, as PEFT's LoraLayer puts it on nn.Linear: lora_A and lora_B made as nn.Linear
    (in that order), then A drawn kaiming-uniform (a=sqrt(5)) again and B zeroed; the output is
    base(x) + lora_B(lora_A(x)) * alpha / r, and every other parameter is frozen."""
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    layers = [m for n, m in model.named_modules()
              if isinstance(m, (nn.Linear, nn.Conv2d)) and any(n == t or n.endswith("." + t) for t in targets)]
    for layer in layers:
        if isinstance(layer, nn.Linear):
            layer.lora_A = nn.Linear(layer.in_features, r, bias=False)
            layer.lora_B = nn.Linear(r, layer.out_features, bias=False)
        else:  # PEFT's Conv2d: A with the layer's kernel, stride and padding; B 1x1
            layer.lora_A = nn.Conv2d(layer.in_channels, r, layer.kernel_size, layer.stride, layer.padding, bias=False)
            layer.lora_B = nn.Conv2d(r, layer.out_channels, 1, 1, bias=False)
        nn.init.kaiming_uniform_(layer.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(layer.lora_B.weight)
        base = layer.forward
        layer.forward = (lambda m, f: lambda x: f(x) + m.lora_B(m.lora_A(x)) * (alpha / r))(layer, base)
    return model


def fixtures_folder():
    base = HERE.parent / "test" / "fixtures"
    if "--live" in sys.argv:
        return pathlib.Path(sys.argv[sys.argv.index("--live") + 2])
    if "--version-dependent" in sys.argv:
        return base / f"torch-{'.'.join(torch.__version__.split('.')[:2])}" / "modules"
    return base / "modules"


def record(name, make_model, input_shape, classes, target_shape=None, token_inputs=False, vocabulary=None, adamw_eps=1e-8):
    torch.manual_seed(SEED)
    model = make_model()
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    generator = torch.Generator().manual_seed(1234)
    inputs = (torch.randint(0, vocabulary or classes, input_shape, generator=generator) if token_inputs
              else torch.randn(*input_shape, generator=generator))
    targets = torch.randint(0, classes, target_shape or (input_shape[0],), generator=generator)
    model.eval()
    with torch.no_grad():
        eval_output = model(inputs)
    model.train()
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}  # frozen: none
    model.load_state_dict(initial)
    model.zero_grad(set_to_none=True)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3, eps=adamw_eps)
    losses = []
    for _ in range(3):
        optimizer.zero_grad(set_to_none=True)
        step_loss = F.cross_entropy(model(inputs), targets)
        step_loss.backward()
        optimizer.step()
        losses.append(step_loss.item())
    tensors = {f"initial.{k}": v for k, v in initial.items()}
    tensors.update({f"grad.{k}": v for k, v in grads.items()})
    tensors.update({f"adamw3.{k}": v.clone() for k, v in model.state_dict().items()})
    tensors.update({"input": inputs, "target": targets, "eval_output": eval_output})
    out = fixtures_folder() / f"{name}.safetensors"
    out.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"generatedBy": "scripts/make-module-fixtures.py", "torchVersion": torch.__version__,
                "seed": str(SEED), "adamw3_losses": json.dumps(losses), "adamw_eps": repr(adamw_eps)}
    golden.write_safetensors(out, tensors, metadata)
    print(f"wrote {out} ({sum(p.numel() for p in model.parameters())} parameters)")


class RMSNorm(nn.Module):
    """torch.nn.RMSNorm of PyTorch 2.4, which python3-torch 1.13 lacks: the same formula and parameter."""

    def __init__(self, normalized_shape, eps=None):
        super().__init__()
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(self.shape))

    def forward(self, x):
        eps = self.eps if self.eps is not None else torch.finfo(x.dtype).eps
        dims = tuple(range(-len(self.shape), 0))
        return x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps) * self.weight


# Each layer of the module issue, as PyTorch builds it, with the input shape it runs on. The names
# are the cases of test/layers-golden.test.ts, which builds the same layers with nn.*.
LAYER_CASES = {
    "conv1d": (lambda: nn.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9)),
    "conv3d": (lambda: nn.Conv3d(2, 3, (1, 2, 2), padding=(0, 1, 1)), (2, 2, 3, 4, 4)),
    "convTranspose1d": (lambda: nn.ConvTranspose1d(3, 2, 3, stride=2, output_padding=1), (2, 3, 5)),
    "convTranspose2d": (lambda: nn.ConvTranspose2d(4, 2, 2, stride=2, bias=False), (2, 4, 3, 3)),
    "maxPool1d": (lambda: nn.MaxPool1d(2), (2, 3, 8)),
    "avgPool1d": (lambda: nn.AvgPool1d(3, stride=2, padding=1), (2, 3, 8)),
    "adaptiveAvgPool1d": (lambda: nn.AdaptiveAvgPool1d(3), (2, 3, 8)),
    "adaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 7, 8)),
    "adaptiveMaxPool2d": (lambda: nn.AdaptiveMaxPool2d(2), (2, 3, 5, 5)),
    "batchNorm3d": (lambda: nn.BatchNorm3d(2), (3, 2, 2, 3, 3)),
    "groupNorm": (lambda: nn.GroupNorm(2, 4), (2, 4, 3, 3)),
    "instanceNorm2d": (lambda: nn.InstanceNorm2d(3, affine=True), (2, 3, 4, 4)),
    "rmsNorm": (lambda: RMSNorm(6), (2, 3, 6)),
    "dropout2d": (lambda: nn.Dropout2d(0.3), (2, 3, 4, 4)),
    "identity": (lambda: nn.Identity(), (2, 5)),
    "upsampleNearest": (lambda: nn.Upsample(scale_factor=2, mode="nearest"), (2, 3, 3, 3)),
    "upsampleBilinear": (lambda: nn.Upsample(size=(5, 7), mode="bilinear", align_corners=True), (2, 3, 3, 3)),
    "pixelShuffle": (lambda: nn.PixelShuffle(2), (2, 8, 3, 3)),
    "unflatten": (lambda: nn.Unflatten(1, (2, 6)), (2, 12)),
    "leakyRelu": (lambda: nn.LeakyReLU(0.2), (2, 7)),
    "elu": (lambda: nn.ELU(0.5), (2, 7)),
    "silu": (lambda: nn.SiLU(), (2, 7)),
    "mish": (lambda: nn.Mish(), (2, 7)),
    "softplus": (lambda: nn.Softplus(2, 10), (2, 7)),
    "hardswish": (lambda: nn.Hardswish(), (2, 7)),
    "prelu": (lambda: nn.PReLU(3), (2, 3, 4)),
    "relu6": (lambda: nn.ReLU6(), (2, 7)),
    "hardsigmoid": (lambda: nn.Hardsigmoid(), (2, 7)),
    "hardtanh": (lambda: nn.Hardtanh(-0.5, 0.5), (2, 7)),
}


def write_layers():
    """layers.safetensors: per case, <case>.initial.<key> (seeded), <case>.input, <case>.eval_output
    and, for layers with parameters, <case>.grad.<name> of the mean squared output in train mode."""
    tensors = {}
    for index, (name, (make, shape)) in enumerate(LAYER_CASES.items()):
        torch.manual_seed(index)
        model = nn.Sequential(make())
        inputs = torch.randn(*shape, generator=torch.Generator().manual_seed(100 + index))
        tensors.update({f"{name}.initial.{k}": v.clone() for k, v in model.state_dict().items()})
        model.eval()
        with torch.no_grad():
            tensors[f"{name}.eval_output"] = model(inputs)
        model.train()
        output = model(inputs)
        if any(True for _ in model.parameters()):
            F.mse_loss(output, torch.zeros_like(output)).backward()
            tensors.update({f"{name}.grad.{k}": p.grad.clone() for k, p in model.named_parameters()})
        tensors[f"{name}.input"] = inputs
    out = HERE.parent / "test" / "fixtures" / "modules" / "layers.safetensors"
    golden.write_safetensors(out, tensors, {"generatedBy": "scripts/make-module-fixtures.py", "torchVersion": torch.__version__,
                                             "cases": json.dumps(list(LAYER_CASES))})
    print(f"wrote {out}")


# nn.init schemes, seeded and applied in this order to fresh tensors, as test/init-golden.test.ts
# replays them: (name, shape, call). trunc_normal_ draws differently from PyTorch 2.12 on, so the file
# is kept per version.
INIT_CASES = [
    ("uniform", (4, 5), lambda t: nn.init.uniform_(t, -0.5, 2.0)),
    ("normal", (4, 5), lambda t: nn.init.normal_(t, 1.0, 0.3)),
    ("trunc_normal_default", (6, 7), lambda t: nn.init.trunc_normal_(t)),
    ("trunc_normal_vit", (1, 17, 32), lambda t: nn.init.trunc_normal_(t, std=0.02)),
    ("trunc_normal_narrow", (64,), lambda t: nn.init.trunc_normal_(t, mean=0.0, std=1.0, a=1.5, b=2.5)),
    ("trunc_normal_shifted", (40,), lambda t: nn.init.trunc_normal_(t, mean=1.0, std=0.5, a=-0.25, b=0.5)),
    ("xavier_uniform", (8, 3), lambda t: nn.init.xavier_uniform_(t, gain=1.5)),
    ("xavier_normal", (8, 3, 2), lambda t: nn.init.xavier_normal_(t)),
    ("kaiming_uniform", (6, 4, 3, 3), lambda t: nn.init.kaiming_uniform_(t, a=math.sqrt(5))),
    ("kaiming_normal", (6, 4), lambda t: nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")),
    ("orthogonal", (5, 3), lambda t: nn.init.orthogonal_(t, gain=2.0)),
]


def write_init_schemes():
    torch.manual_seed(0)
    tensors = {}
    for name, shape, call in INIT_CASES:
        tensor = torch.empty(shape)
        with torch.no_grad():
            call(tensor)
        tensors[name] = tensor
    out = fixtures_folder() / "init-schemes.safetensors"
    out.parent.mkdir(parents=True, exist_ok=True)
    golden.write_safetensors(out, tensors, {"generatedBy": "scripts/make-module-fixtures.py", "torchVersion": torch.__version__,
                                             "seed": "0", "cases": json.dumps([name for name, _, _ in INIT_CASES])})
    print(f"wrote {out}")


# The models whose three AdamW steps depend on the CPU's kernels as well as the version's: oneDNN picks
# its convolution kernels by the instruction set (AVX2 against AVX-512 moves them by 1e-5).
# test/modules-golden.test.ts computes their references live, on the machine and settings it runs on.
LIVE = {
    "unet": lambda: record("unet", lambda: UNet(3, 2, width=8), (2, 3, 16, 16), 2, (2, 16, 16)),
    "resnet18": lambda: record("resnet18", lambda: ResNet18(width=8, num_classes=10), (4, 3, 16, 16), 10),
    "lora-resnet": lambda: record("lora-resnet", lambda: with_lora(ResNet18(width=8, num_classes=10), ["conv1", "conv2", "fc"], 2, 4), (4, 3, 16, 16), 10),
}


def main():
    if "--live" in sys.argv:  # --live <model> <folder> <threads>: that model's fixture, made on this machine
        at = sys.argv.index("--live")
        torch.set_num_threads(int(sys.argv[at + 3]))
        LIVE[sys.argv[at + 1]]()
        return
    LIVE["unet"]()
    write_init_schemes()
    if "--version-dependent" in sys.argv:
        return
    LIVE["resnet18"]()
    record("tied-lm", TiedLM, (4, 8), 16, (4, 8), token_inputs=True)
    record("lstm-classifier", LSTMClassifier, (4, 7), 3, token_inputs=True, vocabulary=12)
    record("gru-regressor", GRURegressor, (4, 6, 5), 3)
    record("gpt-mini", GPTMini, (4, 8), 16, (4, 8), token_inputs=True)
    # LoRA (r 4, alpha 8) on every c_attn and c_proj of the GPT-mini, the rest frozen.
    record("lora-gpt", lambda: with_lora(GPTMini(), ["c_attn", "c_proj"], 4, 8), (4, 8), 16, (4, 8), token_inputs=True)
    # LoRA on every convolution named conv1/conv2 and the head of a ResNet-18; BatchNorm keeps training, as in PEFT.
    LIVE["lora-resnet"]()
    record("attention-classifier", AttentionClassifier, (4, 6), 3, token_inputs=True, vocabulary=12)
    # Attention's key bias has an exact gradient of zero (it shifts every score of a query alike), so
    # its computed gradient is rounding noise, which Adam's default eps (1e-8) would turn into steps of
    # noise / |noise|; eps 1e-6 keeps those steps below the noise and leaves every other step alike.
    record("packed-recurrent", PackedRecurrent, (4, 7), 3, token_inputs=True, vocabulary=12)
    record("transformer", TransformerModel, (4, 6), 3, token_inputs=True, vocabulary=12, adamw_eps=1e-6)
    write_layers()
    write_functional()


if __name__ == "__main__":
    main()
