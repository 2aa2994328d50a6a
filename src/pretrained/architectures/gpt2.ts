// GPT-2 as transformers writes it (GPT2LMHeadModel): learned positions,
// pre-norm blocks whose projections are Conv1D ([in, out] weights, x @ W + b),
// gelu_new, and a head tied to the token embedding, under transformers'
// module names. The output is firebrand's [batch, vocabulary, time].
import { firebrandError } from '../../errors';
import type { LinearSpec } from '../../nn/layer-specs';
import { nn } from '../../nn/layers';
import { F, torch } from '../../nn/module/functional';
import type { FunctionalLayer } from '../../nn/module/functional-layers';
import type { Layer, ModuleList, Parameter } from '../../nn/module/module';
import type { Tensor } from '../../nn/module/tensor';

/** config.json's fields GPT-2 reads (transformers' GPT2Config names). */
export interface GPT2Config {
  model_type: string;
  vocab_size: number;
  n_positions: number;
  n_embd: number;
  n_layer: number;
  n_head: number;
  n_inner?: number | null;
  activation_function?: string;
  resid_pdrop?: number;
  embd_pdrop?: number;
  attn_pdrop?: number;
  layer_norm_epsilon?: number;
  scale_attn_weights?: boolean;
  scale_attn_by_inverse_layer_idx?: boolean;
  reorder_and_upcast_attn?: boolean;
  tie_word_embeddings?: boolean;
}

/** transformers' Conv1D: a linear layer whose weight is [in, out] (x @ W + b, as torch.addmm). */
export class Conv1D extends nn.Module {
  weight: Parameter;
  bias: Parameter;

  constructor(
    readonly nf: number,
    readonly nx: number,
  ) {
    super();
    this.weight = new nn.Parameter([nx, nf]);
    this.bias = new nn.Parameter([nf]);
    nn.init.normal_(this.weight, { std: 0.02 });
  }

  /** x: [batch, time, nx]. */
  forward(x: Tensor): Tensor {
    return torch.addmm(this.bias, x.view(-1, this.nx), this.weight).view(x.size(0), x.size(1), this.nf);
  }
}

export class GPT2Attention extends nn.Module {
  c_attn: Conv1D;
  c_proj: Conv1D;
  resid_dropout: FunctionalLayer;

  constructor(
    private readonly config: GPT2Config,
    private readonly layerIndex: number,
  ) {
    super();
    this.c_attn = new Conv1D(3 * config.n_embd, config.n_embd);
    this.c_proj = new Conv1D(config.n_embd, config.n_embd);
    this.resid_dropout = nn.dropout(config.resid_pdrop ?? 0.1);
  }

  forward(x: Tensor): Tensor {
    const { n_embd: dim, n_head: heads } = this.config;
    const headDim = dim / heads;
    const [batch, time] = [x.size(0), x.size(1)];
    const [q, k, v] = this.c_attn
      .forward(x)
      .split([dim, dim, dim], 2)
      .map((t) => t.view(batch, time, heads, headDim).transpose(1, 2));
    // attn_pdrop is attention's own dropout (transformers' attn_dropout module).
    let scale = (this.config.scale_attn_weights ?? true) ? headDim ** -0.5 : 1;
    if (this.config.scale_attn_by_inverse_layer_idx) scale /= this.layerIndex + 1;
    const y = F.scaledDotProductAttention(q, k, v, { isCausal: true, scale, dropoutP: this.config.attn_pdrop ?? 0.1 });
    return this.resid_dropout.forward(this.c_proj.forward(y.transpose(1, 2).contiguous().view(batch, time, dim)));
  }
}

export class GPT2MLP extends nn.Module {
  c_fc: Conv1D;
  c_proj: Conv1D;
  dropout: FunctionalLayer;

  constructor(inner: number, config: GPT2Config) {
    super();
    this.c_fc = new Conv1D(inner, config.n_embd);
    this.c_proj = new Conv1D(config.n_embd, inner);
    this.dropout = nn.dropout(config.resid_pdrop ?? 0.1);
  }

  forward(x: Tensor): Tensor {
    return this.dropout.forward(this.c_proj.forward(F.gelu(this.c_fc.forward(x), 'tanh')));
  }
}

export class GPT2Block extends nn.Module {
  ln_1: Layer;
  attn: GPT2Attention;
  ln_2: Layer;
  mlp: GPT2MLP;

  constructor(config: GPT2Config, layerIndex: number) {
    super();
    const eps = config.layer_norm_epsilon ?? 1e-5;
    this.ln_1 = nn.layerNorm(config.n_embd, { eps });
    this.attn = new GPT2Attention(config, layerIndex);
    this.ln_2 = nn.layerNorm(config.n_embd, { eps });
    this.mlp = new GPT2MLP(config.n_inner ?? 4 * config.n_embd, config);
  }

  forward(x: Tensor): Tensor {
    const h = x.add(this.attn.forward(this.ln_1.forward(x)));
    return h.add(this.mlp.forward(this.ln_2.forward(h)));
  }
}

export class GPT2Model extends nn.Module {
  wte: Layer;
  wpe: Layer;
  drop: FunctionalLayer;
  h: ModuleList<GPT2Block>;
  ln_f: Layer;

  constructor(config: GPT2Config) {
    super();
    const activation = config.activation_function ?? 'gelu_new';
    if (activation !== 'gelu_new') {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `config.json: activation_function '${activation}' is not supported; GPT-2 uses 'gelu_new'`,
      );
    }
    if (config.reorder_and_upcast_attn) {
      throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'config.json: reorder_and_upcast_attn is not supported');
    }
    this.wte = nn.embedding(config.vocab_size, config.n_embd);
    this.wpe = nn.embedding(config.n_positions, config.n_embd);
    this.drop = nn.dropout(config.embd_pdrop ?? 0.1);
    this.h = nn.moduleList(Array.from({ length: config.n_layer }, (_, i) => new GPT2Block(config, i)));
    this.ln_f = nn.layerNorm(config.n_embd, { eps: config.layer_norm_epsilon ?? 1e-5 });
  }

  forward(tokens: Tensor): Tensor {
    let x = this.drop.forward(this.wte.forward(tokens).add(this.wpe.forward(torch.arange(tokens.size(1)))));
    for (const block of this.h) x = block.forward(x);
    return this.ln_f.forward(x);
  }
}

/** GPT2LMHeadModel: logits [batch, vocabulary, time]; the head is the token embedding (tied). */
export class GPT2LMHeadModel extends nn.Module {
  transformer: GPT2Model;
  lm_head: Layer<LinearSpec>;

  constructor(readonly config: GPT2Config) {
    super();
    this.transformer = new GPT2Model(config);
    this.lm_head = nn.linear(config.n_embd, config.vocab_size, { bias: false });
    if (config.tie_word_embeddings ?? true) this.lm_head.weight = this.transformer.wte.weight;
  }

  forward(tokens: Tensor): Tensor {
    return this.lm_head.forward(this.transformer.forward(tokens)).transpose(1, 2);
  }

  /** The output layer (transformers' get_output_embeddings): what LoRA's 'all-linear' leaves out. */
  getOutputEmbeddings(): Layer<LinearSpec> {
    return this.lm_head;
  }
}
