// nanoGPT's model written as TypeScript modules: token and learned
// position embeddings, pre-norm blocks with causal attention, a head tied to
// the token embedding, and nanoGPT's initialisation. The same class as GPTMini
// in scripts/make-module-fixtures.py (the same names, order and seeded weights).
import { F, Layer, LinearSpec, nn, Tensor, torch } from '../../src';

class CausalSelfAttention extends nn.Module {
  c_attn: Layer<LinearSpec>;
  c_proj: Layer<LinearSpec>;

  constructor(
    private readonly dim: number,
    private readonly heads: number,
  ) {
    super();
    this.c_attn = nn.linear(dim, 3 * dim);
    this.c_proj = nn.linear(dim, dim);
  }

  forward(x: Tensor): Tensor {
    const [batch, time] = [x.size(0), x.size(1)];
    const [q, k, v] = this.c_attn
      .forward(x)
      .split([this.dim, this.dim, this.dim], 2)
      .map((t) => t.view(batch, time, this.heads, this.dim / this.heads).transpose(1, 2));
    const y = F.scaledDotProductAttention(q, k, v, { isCausal: true })
      .transpose(1, 2)
      .contiguous()
      .view(batch, time, this.dim);
    return this.c_proj.forward(y);
  }
}

class MLP extends nn.Module {
  c_fc: Layer<LinearSpec>;
  gelu = nn.gelu();
  c_proj: Layer<LinearSpec>;

  constructor(dim: number) {
    super();
    this.c_fc = nn.linear(dim, 4 * dim);
    this.c_proj = nn.linear(4 * dim, dim);
  }

  forward(x: Tensor): Tensor {
    return this.c_proj.forward(this.gelu.forward(this.c_fc.forward(x)));
  }
}

class Block extends nn.Module {
  ln_1: Layer;
  attn: CausalSelfAttention;
  ln_2: Layer;
  mlp: MLP;

  constructor(dim: number, heads: number) {
    super();
    this.ln_1 = nn.layerNorm(dim);
    this.attn = new CausalSelfAttention(dim, heads);
    this.ln_2 = nn.layerNorm(dim);
    this.mlp = new MLP(dim);
  }

  forward(x: Tensor): Tensor {
    const h = x.add(this.attn.forward(this.ln_1.forward(x)));
    return h.add(this.mlp.forward(this.ln_2.forward(h)));
  }
}

export class GPTMini extends nn.Module {
  transformer;
  lm_head: Layer<LinearSpec>;

  constructor({ vocab = 16, context = 8, dim = 16, heads = 2, layers = 2 } = {}) {
    super();
    this.transformer = nn.moduleDict({
      wte: nn.embedding(vocab, dim),
      wpe: nn.embedding(context, dim),
      h: nn.moduleList(Array.from({ length: layers }, () => new Block(dim, heads))),
      ln_f: nn.layerNorm(dim),
    });
    this.lm_head = nn.linear(dim, vocab, { bias: false });
    this.wte.weight = this.lm_head.weight;
    for (const module of this.modules()) {
      if (!(module instanceof Layer)) continue;
      if (module.type === 'linear' || module.type === 'embedding') nn.init.normal_(module.weight, { std: 0.02 });
      if (module.type === 'linear' && (module.spec as LinearSpec).bias !== false) nn.init.zeros_(module.bias);
    }
    for (const [path, module] of this.namedModules()) {
      if (path.endsWith('c_proj')) nn.init.normal_((module as Layer).weight, { std: 0.02 / Math.sqrt(2 * layers) });
    }
  }

  private get wte(): Layer {
    return this.transformer.wte as Layer;
  }

  forward(tokens: Tensor): Tensor {
    const { wpe, h, ln_f } = this.transformer as unknown as { wpe: Layer; h: Iterable<Block>; ln_f: Layer };
    let x = this.wte.forward(tokens).add(wpe.forward(torch.arange(tokens.size(1))));
    for (const block of h) x = block.forward(x);
    return this.lm_head.forward(ln_f.forward(x)).transpose(1, 2);
  }
}
