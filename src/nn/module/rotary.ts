// Rotary position embeddings as transformers writes them for Llama
// (LlamaRotaryEmbedding with the default rope, rotate_half, apply_rotary_pos_emb):
// cos and sin of each position times the inverse frequencies, applied to
// queries and keys by rotating the halves of their last dimension.
import { firebrandError } from '../../errors';
import { torch } from './functional';
import { Module } from './module';
import type { Tensor } from './tensor';

export interface RotaryEmbeddingOptions {
  /** rope_theta (default 10000). */
  base?: number;
  /** Scales cos and sin (transformers' attention_scaling; 1 for the default rope). */
  attentionScaling?: number;
  /**
   * The inverse frequencies from the powers base^(2i/dim) and the positions (a rope scaling kind:
   * rope-scaling.ts); by default 1 / powers.
   */
  inverseFrequencies?: (powers: Tensor, positionIds: Tensor) => Tensor;
}

/** cos and sin, [batch, positions, dim], of positionIds [batch, positions] (LlamaRotaryEmbedding). */
export class RotaryEmbedding extends Module {
  private readonly base: number;
  private readonly attentionScaling: number;
  private readonly scaled?: (powers: Tensor, positionIds: Tensor) => Tensor;

  constructor(
    readonly dim: number,
    { base = 10000, attentionScaling = 1, inverseFrequencies }: RotaryEmbeddingOptions = {},
  ) {
    super();
    if (!Number.isInteger(dim) || dim < 2 || dim % 2 !== 0) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `RotaryEmbedding: dim must be an even integer >= 2, got ${dim}`,
      );
    }
    this.base = base;
    this.attentionScaling = attentionScaling;
    this.scaled = inverseFrequencies;
  }

  /**
   * base^(-2i/dim) for i < dim/2 (or as the rope scaling kind makes them), in float32 with PyTorch's
   * own kernels, as transformers computes inv_freq (a buffer there; computed in the graph here, so no
   * rounding of JavaScript's differs).
   */
  inverseFrequencies(positionIds: Tensor): Tensor {
    const exponents = torch.arange(this.dim, { step: 2 }).float().div(this.dim);
    const powers = torch.full([], this.base).pow(exponents);
    return this.scaled === undefined ? torch.onesLike(powers).div(powers) : this.scaled(powers, positionIds);
  }

  /** `x` gives the dtype of cos and sin. */
  forward(x: Tensor, positionIds: Tensor): [Tensor, Tensor] {
    const freqs = positionIds.unsqueeze(-1).float().mul(this.inverseFrequencies(positionIds));
    const emb = torch.cat([freqs, freqs], -1);
    const scaled = (t: Tensor) => (this.attentionScaling === 1 ? t : t.mul(this.attentionScaling));
    return [scaled(emb.cos()).typeAs(x), scaled(emb.sin()).typeAs(x)];
  }
}

/** [-x2, x1] of the halves [x1, x2] of the last dimension. */
export function rotateHalf(x: Tensor): Tensor {
  const [x1, x2] = x.chunk(2, -1);
  return torch.cat([x2.neg(), x1], -1);
}

/**
 * q·cos + rotateHalf(q)·sin and the same for k. cos and sin are [batch, positions, dim]; `unsqueezeDim`
 * is where q and k keep their heads (1 for [batch, heads, positions, dim]).
 */
export function applyRotaryPosEmb(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor, unsqueezeDim = 1): [Tensor, Tensor] {
  const c = cos.unsqueeze(unsqueezeDim);
  const s = sin.unsqueeze(unsqueezeDim);
  return [q.mul(c).add(rotateHalf(q).mul(s)), k.mul(c).add(rotateHalf(k).mul(s))];
}
