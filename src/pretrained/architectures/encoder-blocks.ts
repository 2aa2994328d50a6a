// The pieces BERT and ViT share, as transformers' ViT copies them from BERT:
// self-attention with query/key/value projections (an optional mask of the
// keys to attend to), and a dense layer followed by the config's hidden_act.
import type { LinearSpec } from '../../nn/layer-specs';
import { nn } from '../../nn/layers';
import { F } from '../../nn/module/functional';
import type { Layer } from '../../nn/module/module';
import type { Tensor } from '../../nn/module/tensor';
import { hiddenActivation } from './hidden-activation';

/** config.json's fields BERT and ViT share (transformers' names). */
export interface EncoderConfig {
  model_type: string;
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  intermediate_size: number;
  hidden_act?: string;
  hidden_dropout_prob?: number;
  attention_probs_dropout_prob?: number;
  layer_norm_eps?: number;
  /** The classes of a classification head (their count is num_labels). */
  id2label?: Record<string, string>;
}

type EncoderAttentionSizes = Pick<
  EncoderConfig,
  'hidden_size' | 'num_attention_heads' | 'attention_probs_dropout_prob'
>;

export class EncoderSelfAttention extends nn.Module {
  query: Layer<LinearSpec>;
  key: Layer<LinearSpec>;
  value: Layer<LinearSpec>;

  constructor(
    private readonly sizes: EncoderAttentionSizes,
    bias = true,
  ) {
    super();
    this.query = nn.linear(sizes.hidden_size, sizes.hidden_size, { bias });
    this.key = nn.linear(sizes.hidden_size, sizes.hidden_size, { bias });
    this.value = nn.linear(sizes.hidden_size, sizes.hidden_size, { bias });
  }

  /** keep: broadcast to [batch, heads, time, time], true for the keys a query may attend to (none: all). */
  forward(x: Tensor, keep?: Tensor): Tensor {
    const { hidden_size: dim, num_attention_heads: heads } = this.sizes;
    const [batch, time] = [x.size(0), x.size(1)];
    const [q, k, v] = [this.query, this.key, this.value].map((projection) =>
      projection
        .forward(x)
        .view(batch, time, heads, dim / heads)
        .transpose(1, 2),
    );
    const dropoutP = this.sizes.attention_probs_dropout_prob ?? 0.1;
    const y = F.scaledDotProductAttention(q, k, v, { attnMask: keep ?? null, dropoutP });
    return y.transpose(1, 2).contiguous().view(batch, time, dim);
  }
}

/** dense, then hidden_act (BERT's and ViT's intermediate layer). */
export class DenseActivation extends nn.Module {
  dense: Layer<LinearSpec>;
  private readonly activation: (x: Tensor) => Tensor;

  constructor(config: Pick<EncoderConfig, 'hidden_size' | 'intermediate_size' | 'hidden_act'>) {
    super();
    this.dense = nn.linear(config.hidden_size, config.intermediate_size);
    this.activation = hiddenActivation(config.hidden_act ?? 'gelu');
  }

  forward(x: Tensor): Tensor {
    return this.activation(this.dense.forward(x));
  }
}
