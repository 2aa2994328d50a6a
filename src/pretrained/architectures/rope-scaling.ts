// The rope scaling kinds of Llama-family configs (rope_parameters.rope_type,
// or rope_scaling in older configs), as transformers' modeling_rope_utils
// computes their inverse frequencies and attention scaling: linear, llama3,
// yarn and longrope. The frequencies are computed in the graph, in float32,
// with the operations transformers uses, so that they round as its do.
import { firebrandError } from '../../errors';
import { torch } from '../../nn/module/functional';
import type { RotaryEmbeddingOptions } from '../../nn/module/rotary';
import type { Tensor } from '../../nn/module/tensor';

/** rope_parameters (or rope_scaling) as transformers writes them. */
export interface RopeParameters {
  rope_type?: string;
  /** rope_scaling's older name for rope_type. */
  type?: string;
  rope_theta?: number;
  factor?: number;
  original_max_position_embeddings?: number;
  partial_rotary_factor?: number;
  attention_factor?: number;
  beta_fast?: number;
  beta_slow?: number;
  mscale?: number;
  mscale_all_dim?: number;
  truncate?: boolean;
  short_factor?: number[];
  long_factor?: number[];
  low_freq_factor?: number;
  high_freq_factor?: number;
}

/** The config fields rope scaling reads besides rope_parameters. */
export interface RopeContext {
  maxPositionEmbeddings: number;
  /** A top-level original_max_position_embeddings (older configs). */
  originalMaxPositionEmbeddings?: number;
  headDim: number;
}

const SUPPORTED = ['default', 'linear', 'llama3', 'yarn', 'longrope'];

/** 1 / x as PyTorch's `1.0 / x` computes it (reciprocal). */
const reciprocal = (x: Tensor) => torch.onesLike(x).div(x);
/** 1 - x as PyTorch's `1 - x` computes it. */
const oneMinus = (x: Tensor) => torch.onesLike(x).sub(x);

function required(parameters: RopeParameters, kind: string, field: keyof RopeParameters): number {
  const value = parameters[field];
  if (typeof value !== 'number') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `config.json: rope_type '${kind}' needs a number for rope_parameters.${field}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function linear(parameters: RopeParameters): Partial<RotaryEmbeddingOptions> {
  const factor = required(parameters, 'linear', 'factor');
  return { inverseFrequencies: (powers) => reciprocal(powers).div(factor) };
}

function llama3(parameters: RopeParameters, original: number): Partial<RotaryEmbeddingOptions> {
  const factor = required(parameters, 'llama3', 'factor');
  const low = required(parameters, 'llama3', 'low_freq_factor');
  const high = required(parameters, 'llama3', 'high_freq_factor');
  const [lowWavelength, highWavelength] = [original / low, original / high];
  return {
    inverseFrequencies: (powers) => {
      const inverse = reciprocal(powers);
      const wavelength = reciprocal(inverse).mul(2 * Math.PI);
      const scaled = torch.where(wavelength.gt(lowWavelength), inverse.div(factor), inverse);
      const smooth = reciprocal(wavelength)
        .mul(original)
        .sub(low)
        .div(high - low);
      const smoothed = oneMinus(smooth).mul(scaled).div(factor).add(smooth.mul(scaled));
      const medium = wavelength.lt(highWavelength).logicalNot().mul(wavelength.gt(lowWavelength).logicalNot());
      return torch.where(medium, smoothed, scaled);
    },
  };
}

function yarn(parameters: RopeParameters, context: RopeContext, original: number, base: number, dim: number) {
  const factor = parameters.factor ?? context.maxPositionEmbeddings / original;
  const mscaleOf = (scale: number, mscale = 1) => (scale <= 1 ? 1 : 0.1 * mscale * Math.log(scale) + 1);
  const { mscale, mscale_all_dim: mscaleAllDim } = parameters;
  const attentionScaling =
    parameters.attention_factor ??
    (mscale && mscaleAllDim ? mscaleOf(factor, mscale) / mscaleOf(factor, mscaleAllDim) : mscaleOf(factor));
  const correctionDim = (rotations: number) =>
    (dim * Math.log(original / (rotations * 2 * Math.PI))) / (2 * Math.log(base));
  let [low, high] = [correctionDim(parameters.beta_fast || 32), correctionDim(parameters.beta_slow || 1)];
  if (parameters.truncate ?? true) [low, high] = [Math.floor(low), Math.ceil(high)];
  [low, high] = [Math.max(low, 0), Math.min(high, dim - 1)];
  if (low === high) high += 0.001;
  return {
    attentionScaling,
    inverseFrequencies: (powers: Tensor) => {
      const ramp = torch
        .arange(dim / 2)
        .float()
        .sub(low)
        .div(high - low)
        .clamp(0, 1);
      const extrapolation = oneMinus(ramp);
      const interpolated = reciprocal(powers.mul(factor)).mul(oneMinus(extrapolation));
      return interpolated.add(reciprocal(powers).mul(extrapolation));
    },
  };
}

function longrope(parameters: RopeParameters, context: RopeContext, original: number, dim: number) {
  const factors = (field: 'short_factor' | 'long_factor') => {
    const values = parameters[field];
    if (!Array.isArray(values) || values.length !== dim / 2) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `config.json: rope_type 'longrope' needs rope_parameters.${field}, ${dim / 2} numbers (half the rotary dim)`,
      );
    }
    return () => torch.stack(values.map((value) => torch.full([], value)));
  };
  const [short, long] = [factors('short_factor'), factors('long_factor')];
  const factor = parameters.factor ?? context.maxPositionEmbeddings / original;
  const attentionScaling =
    parameters.attention_factor ?? (factor <= 1 ? 1 : Math.sqrt(1 + Math.log(factor) / Math.log(original)));
  return {
    attentionScaling,
    // The long factors once the sequence reaches past the original context (its longest position id).
    inverseFrequencies: (powers: Tensor, positionIds: Tensor) => {
      const beyond = positionIds.amax().add(1).gt(original);
      return reciprocal(torch.where(beyond, long(), short()).mul(powers));
    },
  };
}

/** RotaryEmbedding's options for a config's rope parameters: its base, and the scaling its kind makes. */
export function ropeOptions(parameters: RopeParameters, context: RopeContext): RotaryEmbeddingOptions {
  const kind = parameters.rope_type ?? parameters.type ?? 'default';
  const base = parameters.rope_theta ?? 10000;
  if (!SUPPORTED.includes(kind)) {
    const why =
      kind === 'dynamic'
        ? " (its frequencies depend on the longest sequence a model has seen, state transformers keeps between calls, so a model's outputs would depend on its history)"
        : '';
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `config.json: rope_type '${kind}' is not supported${why}; supported: ${SUPPORTED.join(', ')}`,
    );
  }
  if ((parameters.partial_rotary_factor ?? 1) !== 1) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `config.json: partial_rotary_factor ${parameters.partial_rotary_factor} is not supported by the Llama family (1)`,
    );
  }
  const original =
    parameters.original_max_position_embeddings ??
    context.originalMaxPositionEmbeddings ??
    context.maxPositionEmbeddings;
  const dim = context.headDim;
  const scaling =
    kind === 'linear'
      ? linear(parameters)
      : kind === 'llama3'
        ? llama3(parameters, original)
        : kind === 'yarn'
          ? yarn(parameters, context, original, base, dim)
          : kind === 'longrope'
            ? longrope(parameters, context, original, dim)
            : {};
  return { base, ...scaling };
}
