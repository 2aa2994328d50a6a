// F (torch.nn.functional) and the tensor-building functions of torch, for use
// inside a traced forward. Names are PyTorch's in camelCase; so are defaults.
import { firebrandError } from '../../errors';
import type { Size2d } from '../layer-specs';
import { op, splitPieces, tensorsOp, type Dim, type DtypeName, type SizeArg, type Tensor } from './tensor';

type Optional<T> = T | null;
const pair = (size: Size2d): [number, number] => (Array.isArray(size) ? size : [size, size]);

/** A size per spatial dimension: one number for all, or a list of `dims` (as PyTorch's _ntuple). */
type SizeNd = number | number[];
const perDim = (size: SizeNd, dims: number): number[] => (Array.isArray(size) ? size : Array<number>(dims).fill(size));

interface ConvOptions {
  stride?: SizeNd;
  padding?: SizeNd;
  dilation?: SizeNd;
  groups?: number;
}
interface MaxPoolOptions {
  stride?: SizeNd;
  padding?: SizeNd;
  dilation?: SizeNd;
  ceilMode?: boolean;
}
interface AvgPoolOptions {
  stride?: SizeNd;
  padding?: SizeNd;
  ceilMode?: boolean;
  countIncludePad?: boolean;
}

// F.conv1d/2d/3d and the poolings of each dimension: one op each, over `dims` spatial dimensions.
const convolution =
  (dims: number) =>
  (
    x: Tensor,
    weight: Tensor,
    bias: Optional<Tensor> = null,
    { stride = 1, padding = 0, dilation = 1, groups = 1 }: ConvOptions = {},
  ) =>
    op(`conv${dims}d`, x, weight, bias, perDim(stride, dims), perDim(padding, dims), perDim(dilation, dims), groups);
const maxPool =
  (dims: number) =>
  (x: Tensor, kernelSize: SizeNd, { stride, padding = 0, dilation = 1, ceilMode = false }: MaxPoolOptions = {}) =>
    op(
      `maxPool${dims}d`,
      x,
      perDim(kernelSize, dims),
      perDim(stride ?? kernelSize, dims),
      perDim(padding, dims),
      perDim(dilation, dims),
      ceilMode,
    );
const avgPool =
  (dims: number) =>
  (
    x: Tensor,
    kernelSize: SizeNd,
    { stride, padding = 0, ceilMode = false, countIncludePad = true }: AvgPoolOptions = {},
  ) =>
    op(
      `avgPool${dims}d`,
      x,
      perDim(kernelSize, dims),
      perDim(stride ?? kernelSize, dims),
      perDim(padding, dims),
      ceilMode,
      countIncludePad,
    );
const adaptiveAvgPool = (dims: number) => (x: Tensor, outputSize: SizeNd) =>
  op(`adaptiveAvgPool${dims}d`, x, perDim(outputSize, dims));

export const F = {
  relu: (x: Tensor) => op('relu', x),
  /** approximate 'tanh' is the tanh approximation; 'none' the exact erf form (default). */
  gelu: (x: Tensor, approximate: 'none' | 'tanh' = 'none') => op('gelu', x, approximate),
  silu: (x: Tensor) => op('silu', x),
  mish: (x: Tensor) => op('mish', x),
  leakyRelu: (x: Tensor, negativeSlope = 0.01) => op('leakyRelu', x, negativeSlope),
  elu: (x: Tensor, alpha = 1) => op('elu', x, alpha),
  softplus: (x: Tensor, beta = 1, threshold = 20) => op('softplus', x, beta, threshold),
  hardswish: (x: Tensor) => op('hardswish', x),
  /** F.relu6 is hardtanh(x, 0, 6), as in PyTorch. */
  relu6: (x: Tensor) => op('hardtanh', x, 0, 6),
  hardtanh: (x: Tensor, minVal = -1, maxVal = 1) => op('hardtanh', x, minVal, maxVal),
  hardsigmoid: (x: Tensor) => op('hardsigmoid', x),
  sigmoid: (x: Tensor) => op('sigmoid', x),
  tanh: (x: Tensor) => op('tanh', x),
  softmax: (x: Tensor, dim: Dim) => op('softmax', x, dim),
  logSoftmax: (x: Tensor, dim: Dim) => op('logSoftmax', x, dim),
  /** Zeroes elements with probability p while the model trains (in eval mode it passes x through). */
  dropout: (x: Tensor, p = 0.5) => op('dropout', x, p),
  /** Zeroes whole channels of [N, C, H, W] with probability p while the model trains. */
  dropout2d: (x: Tensor, p = 0.5) => op('featureDropout', x, p),
  linear: (x: Tensor, weight: Tensor, bias: Optional<Tensor> = null) => op('linear', x, weight, bias),
  layerNorm: (
    x: Tensor,
    normalizedShape: number[],
    weight: Optional<Tensor> = null,
    bias: Optional<Tensor> = null,
    eps = 1e-5,
  ) => op('layerNorm', x, normalizedShape, weight, bias, eps),
  /** x / sqrt(mean(x², the trailing normalizedShape) + eps) * weight; eps null is the dtype's machine epsilon. */
  rmsNorm: (x: Tensor, normalizedShape: number[], weight: Optional<Tensor> = null, eps: Optional<number> = null) =>
    op('rmsNorm', x, normalizedShape, weight, eps),
  groupNorm: (
    x: Tensor,
    numGroups: number,
    weight: Optional<Tensor> = null,
    bias: Optional<Tensor> = null,
    eps = 1e-5,
  ) => op('groupNorm', x, numGroups, weight, bias, eps),
  conv1d: convolution(1),
  conv2d: convolution(2),
  conv3d: convolution(3),
  maxPool1d: maxPool(1),
  maxPool2d: maxPool(2),
  maxPool3d: maxPool(3),
  avgPool1d: avgPool(1),
  avgPool2d: avgPool(2),
  avgPool3d: avgPool(3),
  adaptiveAvgPool1d: adaptiveAvgPool(1),
  adaptiveAvgPool2d: adaptiveAvgPool(2),
  adaptiveAvgPool3d: adaptiveAvgPool(3),
  /** The maximum over adaptive windows of [N, C, H, W] (the values; no indices). */
  adaptiveMaxPool2d: (x: Tensor, outputSize: SizeNd) => op('adaptiveMaxPool2d', x, perDim(outputSize, 2)),
  /** [N, C·r², H, W] to [N, C, H·r, W·r]. */
  pixelShuffle: (x: Tensor, upscaleFactor: number) => op('pixelShuffle', x, upscaleFactor),
  /** Resizes [N, C, H, W] by size or scaleFactor ('nearest' or 'bilinear'). */
  interpolate: (
    x: Tensor,
    {
      size,
      scaleFactor,
      mode = 'nearest',
      alignCorners = false,
    }: { size?: Size2d; scaleFactor?: number; mode?: 'nearest' | 'bilinear'; alignCorners?: boolean },
  ) => op('interpolate2d', x, size === undefined ? null : pair(size), scaleFactor ?? null, mode, alignCorners),
  /** Pads the last dimensions: [left, right, top, bottom, ...] as torch.nn.functional.pad. */
  pad: (x: Tensor, pad: number[], value = 0) => op('constantPad', x, pad, value),
  embedding: (ids: Tensor, weight: Tensor) => op('embedding', weight, ids),
  /**
   * softmax(q kᵀ · scale + mask) v over the last two dimensions (PyTorch's reference formula). A boolean
   * attnMask keeps the positions that are true, a float one is added; isCausal keeps each query's
   * keys up to its own position. dropoutP applies while the model trains only (in PyTorch one writes
   * `dropout_p if self.training else 0`). scale defaults to 1/sqrt(q.size(-1)).
   */
  scaledDotProductAttention: (
    query: Tensor,
    key: Tensor,
    value: Tensor,
    {
      attnMask = null,
      dropoutP = 0,
      isCausal = false,
      scale = null,
    }: { attnMask?: Optional<Tensor>; dropoutP?: number; isCausal?: boolean; scale?: Optional<number> } = {},
  ) => op('scaledDotProductAttention', query, key, value, attnMask, dropoutP, isCausal, scale),
  /**
   * Causal attention in which each query sees its last `window` positions, itself included: key j for
   * query i when i - window < j <= i (transformers' `sliding_window`, as Mistral and Qwen2 use it). The
   * same numbers as scaledDotProductAttention with that mask, but generate's key/value cache can carry
   * it (keeping the last window - 1 positions), where a mask written for the whole sequence cannot.
   */
  slidingWindowAttention: (
    query: Tensor,
    key: Tensor,
    value: Tensor,
    window: number,
    { dropoutP = 0, scale = null }: { dropoutP?: number; scale?: Optional<number> } = {},
  ) => {
    if (!Number.isInteger(window) || window < 1) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `F.slidingWindowAttention: window must be an integer >= 1 (positions each query sees), got ${window}`,
      );
    }
    return op('slidingWindowAttention', query, key, value, window, dropoutP, scale);
  },
};

/** Tensor-building and multi-tensor functions of torch (torch.cat, torch.arange, ...). */
export const torch = {
  cat: (tensors: Tensor[], dim: Dim = 0) => op('cat', tensors, dim),
  stack: (tensors: Tensor[], dim: Dim = 0) => op('stack', tensors, dim),
  /** input + mat1 @ mat2 in one matrix product (torch.addmm, as GPT-2's Conv1D computes). */
  addmm: (input: Tensor, mat1: Tensor, mat2: Tensor) => op('addmm', input, mat1, mat2),
  where: (condition: Tensor, x: Tensor | number, y: Tensor | number) => op('where', condition, x, y),
  /** [start, end) by step on the model's device; the bounds may be traced sizes (x.size(1)). */
  arange: (
    end: SizeArg,
    { start = 0, step = 1, dtype = 'int64' }: { start?: SizeArg; step?: number; dtype?: DtypeName } = {},
  ) => op('arange', start, end, step, dtype),
  zerosLike: (x: Tensor) => op('fullLike', x, 0),
  onesLike: (x: Tensor) => op('fullLike', x, 1),
  fullLike: (x: Tensor, value: number) => op('fullLike', x, value),
  /** A tensor of `value` on the model's device. */
  full: (size: SizeArg[], value: number, dtype: DtypeName = 'float32') => op('full', size, value, dtype),
  split: ((x: Tensor, sizes: number | number[], dim: Dim = 0) =>
    typeof sizes === 'number'
      ? splitPieces(x, sizes, dim)
      : tensorsOp('splitWithSizes', sizes.length, x, sizes, dim)) as {
    (x: Tensor, sizes: number[], dim?: Dim): Tensor[];
    (x: Tensor, size: number, dim?: Dim): Iterable<Tensor>;
  },
};
