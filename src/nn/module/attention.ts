// torch.nn.MultiheadAttention as a built-in layer: PyTorch's parameters
// (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias) and init, and
// its forward with PyTorch's mask conventions.
import type { MultiheadAttentionSpec } from '../layer-specs';
import { BuiltinLayer } from './module';
import { tensorsOp, type Tensor } from './tensor';
import { activeTrace } from './trace';

export interface AttentionOptions {
  /** [N, S]: true (or -inf) leaves that key out, for every query (padding). */
  keyPaddingMask?: Tensor | null;
  /** Also return the attention weights. Default false (PyTorch's default is true). */
  needWeights?: boolean;
  /** [L, S] or [N * numHeads, L, S]: true (or -inf) leaves that key out for that query; floats are added. */
  attnMask?: Tensor | null;
  /** Weights averaged over heads ([N, L, S]) rather than per head ([N, numHeads, L, S]). Default true. */
  averageAttnWeights?: boolean;
  /** Leaves out each query's later keys (a causal mask; with attnMask, both apply). Default false. */
  isCausal?: boolean;
}

/**
 * nn.multiheadAttention. forward(query, key, value, options) returns [output, weights]: output shaped
 * as the query ([N, L, E] with batchFirst, else [L, N, E]); weights only with needWeights, else null.
 */
export class MultiheadAttention extends BuiltinLayer<MultiheadAttentionSpec> {
  forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    {
      keyPaddingMask = null,
      needWeights = false,
      attnMask = null,
      averageAttnWeights = true,
      isCausal = false,
    }: AttentionOptions = {},
  ): [Tensor, Tensor | null] {
    const path = activeTrace(this.type).pathOf(this, this.className);
    const outputs = tensorsOp(
      'multiheadAttention',
      needWeights ? 2 : 1,
      path,
      query,
      key,
      value,
      keyPaddingMask,
      attnMask,
      needWeights,
      averageAttnWeights,
      isCausal,
    );
    return [outputs[0], outputs[1] ?? null];
  }
}
