// The Llama family as transformers writes it (LlamaForCausalLM, and the
// Qwen2 and Mistral configs it covers): RMSNorm, rotary embeddings,
// grouped-query attention and a SwiGLU MLP, under transformers' module names
// so that a checkpoint's weights load with no key map. The output is
// firebrand's [batch, vocabulary, time].
import { firebrandError } from '../../errors';
import type { LinearSpec } from '../../nn/layer-specs';
import { nn } from '../../nn/layers';
import { F, torch } from '../../nn/module/functional';
import type { Layer, ModuleList } from '../../nn/module/module';
import { applyRotaryPosEmb, RotaryEmbedding } from '../../nn/module/rotary';
import { ropeOptions, type RopeParameters } from './rope-scaling';
import type { SymInt, Tensor } from '../../nn/module/tensor';
import type { DecodeKernelSpec } from '../../nn/module/trace';

/** config.json's fields the Llama family reads (transformers' LlamaConfig names). */
export interface LlamaConfig {
  model_type: string;
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads?: number;
  head_dim?: number;
  hidden_act?: string;
  rms_norm_eps?: number;
  /** transformers 5 writes rope_theta and the rope scaling kind here; earlier versions at the top level. */
  rope_parameters?: RopeParameters | null;
  rope_theta?: number;
  rope_scaling?: RopeParameters | null;
  max_position_embeddings?: number;
  original_max_position_embeddings?: number;
  /** Mistral: each position attends to the last sliding_window positions (itself included). */
  sliding_window?: number | null;
  /** Qwen2: sliding_window applies only when this is true, and to the layers from max_window_layers on. */
  use_sliding_window?: boolean;
  max_window_layers?: number;
  /** Each layer's attention, 'full_attention' or 'sliding_attention' (Qwen2; derived when absent). */
  layer_types?: string[];
  attention_bias?: boolean;
  mlp_bias?: boolean;
  tie_word_embeddings?: boolean;
}

/** What a layer needs of the config, resolved with transformers' defaults. */
interface Resolved {
  hidden: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  eps: number;
  /** q, k and v projections have biases (Qwen2, or attention_bias). */
  qkvBias: boolean;
  outputBias: boolean;
  mlpBias: boolean;
}

/** Each layer's window: Mistral's on every layer; Qwen2's on its 'sliding_attention' layers, as transformers builds them. */
function layerWindows(config: LlamaConfig): (number | undefined)[] {
  const layers = Array.from({ length: config.num_hidden_layers }, (_, i) => i);
  if (config.model_type !== 'qwen2') return layers.map(() => config.sliding_window ?? undefined);
  const window = config.use_sliding_window ? (config.sliding_window ?? 4096) : undefined;
  const types =
    config.layer_types ??
    layers.map((i) =>
      window !== undefined && i >= (config.max_window_layers ?? 28) ? 'sliding_attention' : 'full_attention',
    );
  return layers.map((i) => (types[i] === 'sliding_attention' ? window : undefined));
}

function resolve(config: LlamaConfig): Resolved {
  const heads = config.num_attention_heads;
  const kvHeads = config.num_key_value_heads ?? heads;
  if (heads % kvHeads !== 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `config.json: num_attention_heads (${heads}) must be a multiple of num_key_value_heads (${kvHeads})`,
    );
  }
  if ((config.hidden_act ?? 'silu') !== 'silu') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `config.json: hidden_act '${config.hidden_act}' is not supported; the Llama family uses 'silu'`,
    );
  }
  const qwen2 = config.model_type === 'qwen2';
  const attentionBias = config.attention_bias ?? false;
  return {
    hidden: config.hidden_size,
    heads,
    kvHeads,
    headDim: config.head_dim ?? config.hidden_size / heads,
    eps: config.rms_norm_eps ?? 1e-6,
    qkvBias: qwen2 || attentionBias,
    outputBias: !qwen2 && attentionBias,
    mlpBias: config.mlp_bias ?? false,
  };
}

/** [batch, kvHeads, time, headDim] repeated to [batch, kvHeads * repeats, time, headDim] (transformers' repeat_kv). */
function repeatKv(x: Tensor, repeats: number): Tensor {
  if (repeats === 1) return x;
  const [batch, kvHeads, time, headDim] = [x.size(0), x.size(1), x.size(2), x.size(3)];
  return x
    .unsqueeze(2)
    .expand(batch, kvHeads, repeats, time, headDim)
    .reshape(batch, kvHeads.mul(repeats), time, headDim);
}

/**
 * [queries, keys] for the last `queries` of `keys` positions: true where query i may see key j: j <= i,
 * and i - window < j with a window (transformers' sliding_window_overlay on causal).
 */
function visibleKeys(queries: SymInt, keys: SymInt, window: number | undefined): Tensor {
  const back = torch
    .arange(keys, { start: keys.sub(queries) })
    .unsqueeze(1)
    .sub(torch.arange(keys).unsqueeze(0));
  return window === undefined ? back.ge(0) : back.ge(0).mul(back.lt(window));
}

/**
 * The attention mask of a padded batch: [batch, 1, queries, positions], the visible keys that are not
 * padding (attentionMask [batch, positions]: 1 for tokens, 0 for padding; the queries are its last
 * positions, all of them in a full forward and the new ones when decoding from a cache). A padding query
 * keeps its own key, so that no row is empty; its output is padding's, which the loss leaves out.
 */
function paddedMask(attentionMask: Tensor, queries: SymInt, window: number | undefined): Tensor {
  const keys = attentionMask.size(1);
  const padding = attentionMask.eq(0).unsqueeze(1).unsqueeze(1);
  const own = torch
    .arange(keys, { start: keys.sub(queries) })
    .unsqueeze(1)
    .eq(torch.arange(keys).unsqueeze(0));
  const hidden = padding.mul(own.logicalNot()); // a padding key, unless it is the query's own
  return visibleKeys(queries, keys, window).mul(hidden.logicalNot());
}

/**
 * The attention mask of packed sequences ([batch, 1, time, time]): several documents in a row, as TRL's
 * packing and padding-free batches put them; a query sees the visible keys of its own document only.
 * A document starts where position_ids do not go up by one (transformers' find_packed_sequence_indices).
 */
function packedMask(positionIds: Tensor, window: number | undefined): Tensor {
  const time = positionIds.size(1);
  const before = torch.cat([positionIds.slice(1, 0, 1).sub(1), positionIds.slice(1, 0, time.sub(1))], 1);
  const documents = positionIds.sub(before).ne(1).long().cumsum(1);
  const sameDocument = documents.unsqueeze(2).eq(documents.unsqueeze(1)).unsqueeze(1);
  return visibleKeys(time, time, window).mul(sameDocument);
}

/**
 * [batch, queries]: the positions of the last `queries` tokens, counting tokens only (a left-padded
 * sequence starts at 0 after its padding, as transformers' generate computes position_ids:
 * attention_mask.cumsum(-1) - 1, padding at 1). In a right-padded batch they are each row's arange.
 */
function tokenPositions(attentionMask: Tensor, queries: SymInt): Tensor {
  const keys = attentionMask.size(1);
  const counted = attentionMask.long().cumsum(1).sub(1).maskedFill(attentionMask.eq(0), 1);
  return counted.slice(1, keys.sub(queries), keys);
}

export class LlamaAttention extends nn.Module {
  q_proj: Layer<LinearSpec>;
  k_proj: Layer<LinearSpec>;
  v_proj: Layer<LinearSpec>;
  o_proj: Layer<LinearSpec>;

  /** window: this layer's sliding window (undefined: every earlier position). */
  constructor(
    private readonly c: Resolved,
    private readonly window: number | undefined,
  ) {
    super();
    this.q_proj = nn.linear(c.hidden, c.heads * c.headDim, { bias: c.qkvBias });
    this.k_proj = nn.linear(c.hidden, c.kvHeads * c.headDim, { bias: c.qkvBias });
    this.v_proj = nn.linear(c.hidden, c.kvHeads * c.headDim, { bias: c.qkvBias });
    this.o_proj = nn.linear(c.heads * c.headDim, c.hidden, { bias: c.outputBias });
  }

  /** attnMask: the keys each query may see (a padded batch's, from LlamaModel); none: the causal ones in the window. */
  forward(x: Tensor, cos: Tensor, sin: Tensor, attnMask?: Tensor): Tensor {
    const { heads, kvHeads, headDim } = this.c;
    const [batch, time] = [x.size(0), x.size(1)];
    const split = (t: Tensor, count: number) => t.view(batch, time, count, headDim).transpose(1, 2);
    const [q, k] = applyRotaryPosEmb(
      split(this.q_proj.forward(x), heads),
      split(this.k_proj.forward(x), kvHeads),
      cos,
      sin,
    );
    const v = split(this.v_proj.forward(x), kvHeads);
    const repeats = heads / kvHeads;
    const [keys, values] = [repeatKv(k, repeats), repeatKv(v, repeats)];
    const y =
      attnMask !== undefined
        ? F.scaledDotProductAttention(q, keys, values, { attnMask })
        : this.window !== undefined
          ? F.slidingWindowAttention(q, keys, values, this.window)
          : F.scaledDotProductAttention(q, keys, values, { isCausal: true });
    return this.o_proj.forward(y.transpose(1, 2).reshape(batch, time, heads * headDim));
  }
}

export class LlamaMLP extends nn.Module {
  gate_proj: Layer<LinearSpec>;
  up_proj: Layer<LinearSpec>;
  down_proj: Layer<LinearSpec>;

  constructor(hidden: number, intermediate: number, bias: boolean) {
    super();
    this.gate_proj = nn.linear(hidden, intermediate, { bias });
    this.up_proj = nn.linear(hidden, intermediate, { bias });
    this.down_proj = nn.linear(intermediate, hidden, { bias });
  }

  forward(x: Tensor): Tensor {
    return this.down_proj.forward(F.silu(this.gate_proj.forward(x)).mul(this.up_proj.forward(x)));
  }
}

export class LlamaDecoderLayer extends nn.Module {
  self_attn: LlamaAttention;
  mlp: LlamaMLP;
  input_layernorm: Layer;
  post_attention_layernorm: Layer;

  constructor(
    private readonly c: Resolved,
    intermediate: number,
    private readonly window: number | undefined,
  ) {
    super();
    this.self_attn = new LlamaAttention(c, window);
    this.mlp = new LlamaMLP(c.hidden, intermediate, c.mlpBias);
    this.input_layernorm = nn.rmsNorm(c.hidden, { eps: c.eps });
    this.post_attention_layernorm = nn.rmsNorm(c.hidden, { eps: c.eps });
  }

  override decodeKernel(): DecodeKernelSpec {
    const { heads, kvHeads, headDim, eps } = this.c;
    return { kind: 'llamaDecoderLayer', heads, kvHeads, headDim, eps, window: this.window ?? null };
  }

  forward(x: Tensor, cos: Tensor, sin: Tensor, attnMask?: Tensor): Tensor {
    const h = x.add(this.self_attn.forward(this.input_layernorm.forward(x), cos, sin, attnMask));
    return h.add(this.mlp.forward(this.post_attention_layernorm.forward(h)));
  }
}

export class LlamaModel extends nn.Module {
  embed_tokens: Layer;
  layers: ModuleList<LlamaDecoderLayer>;
  norm: Layer;
  rotary_emb: RotaryEmbedding;
  /** Each layer's sliding window (undefined: every earlier position). */
  private readonly windows: (number | undefined)[];

  constructor(config: LlamaConfig) {
    super();
    const c = resolve(config);
    this.windows = layerWindows(config);
    this.embed_tokens = nn.embedding(config.vocab_size, c.hidden);
    this.layers = nn.moduleList(
      this.windows.map((window) => new LlamaDecoderLayer(c, config.intermediate_size, window)),
    );
    this.norm = nn.rmsNorm(c.hidden, { eps: c.eps });
    const rope = { rope_theta: config.rope_theta, ...(config.rope_parameters ?? config.rope_scaling ?? {}) };
    this.rotary_emb = new RotaryEmbedding(
      c.headDim,
      ropeOptions(rope, {
        maxPositionEmbeddings: config.max_position_embeddings ?? 2048,
        originalMaxPositionEmbeddings: config.original_max_position_embeddings,
        headDim: c.headDim,
      }),
    );
  }

  /**
   * attentionMask: [batch, positions], 1 for tokens and 0 for padding (none: every position is a token);
   * positions is time, or, when decoding from a cache, the cached positions and the new ones. positionIds
   * instead: [batch, time], each packed document's positions from 0 (TRL's packing), kept apart.
   */
  forward(tokens: Tensor, attentionMask?: Tensor, positionIds?: Tensor): Tensor {
    let x = this.embed_tokens.forward(tokens);
    const time = tokens.size(1);
    const positions =
      positionIds ??
      (attentionMask === undefined ? torch.arange(time).unsqueeze(0) : tokenPositions(attentionMask, time));
    const [cos, sin] = this.rotary_emb.forward(x, positions);
    // A padded or packed batch's masks, one per distinct window, made once for the layers that share it;
    // otherwise each layer's attention is causal within its window and needs none.
    const masks = new Map<number | undefined, Tensor>();
    const maskFor = (window: number | undefined) => {
      if (attentionMask === undefined && positionIds === undefined) return undefined;
      if (!masks.has(window)) {
        masks.set(
          window,
          positionIds ? packedMask(positionIds, window) : paddedMask(attentionMask as Tensor, time, window),
        );
      }
      return masks.get(window);
    };
    [...this.layers].forEach((layer, i) => (x = layer.forward(x, cos, sin, maskFor(this.windows[i]))));
    return this.norm.forward(x);
  }
}

export interface CausalLMOptions {
  /**
   * Take { input_ids, attention_mask } by name (a padded batch, as a tokenizer pads it; padding is left
   * out of attention, positions counted over tokens) instead of the token ids alone; generateBatch then
   * decodes prompts of different lengths, left-padded.
   */
  attentionMask?: boolean;
  /** Take { input_ids, position_ids }: packed sequences (Dataset.fromSft's packing), each document apart. */
  positionIds?: boolean;
}

/** LlamaForCausalLM (also Qwen2ForCausalLM and MistralForCausalLM): logits [batch, vocabulary, time]. */
export class LlamaForCausalLM extends nn.Module {
  model: LlamaModel;
  lm_head: Layer<LinearSpec>;
  private readonly masked: boolean;
  private readonly packed: boolean;

  constructor(
    readonly config: LlamaConfig,
    { attentionMask = false, positionIds = false }: CausalLMOptions = {},
  ) {
    super();
    if (attentionMask && positionIds) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'LlamaForCausalLM: attentionMask (padded batches) and positionIds (packed ones) exclude each other',
      );
    }
    this.masked = attentionMask;
    this.packed = positionIds;
    this.model = new LlamaModel(config);
    this.lm_head = nn.linear(config.hidden_size, config.vocab_size, { bias: false });
    if (config.tie_word_embeddings ?? false) this.lm_head.weight = this.model.embed_tokens.weight;
  }

  override inputFields(): string[] {
    if (this.packed) return ['input_ids', 'position_ids'];
    return this.masked ? ['input_ids', 'attention_mask'] : super.inputFields();
  }

  /** The output layer (transformers' get_output_embeddings): what LoRA's 'all-linear' leaves out. */
  getOutputEmbeddings(): Layer<LinearSpec> {
    return this.lm_head;
  }

  /** `second`: the attention mask, or with positionIds the position ids, as inputFields names them. */
  forward(tokens: Tensor, second?: Tensor): Tensor {
    const hidden = this.packed ? this.model.forward(tokens, undefined, second) : this.model.forward(tokens, second);
    return this.lm_head.forward(hidden).transpose(1, 2);
  }
}
