// Every layer type of nn.sequential: the fields each takes, with PyTorch's
// defaults (torch.nn's modules). The one owner of their rules and defaults:
// C++ builds the torch::nn modules from the resolved values.
import {
  anyInteger,
  boolean,
  field,
  integer,
  number,
  oneOf,
  REQUIRED,
  Resolved,
  Rule,
  Variants,
} from '../options/schema';

/** An integer >= min, or a list of `n` of them (one per spatial dimension: [height, width]). */
const sizeN =
  (n: number, min: number): Rule =>
  (value) =>
    integer(min)(value) === undefined ||
    (Array.isArray(value) && value.length === n && value.every((size) => integer(min)(size) === undefined))
      ? undefined
      : `an integer >= ${min} or a list of ${n}`;
const size2d = (min: number): Rule => sizeN(2, min);

const shape: Rule = (value) =>
  integer(1)(value) === undefined ||
  (Array.isArray(value) && value.length > 0 && value.every((size) => integer(1)(size) === undefined))
    ? undefined
    : 'an integer >= 1 or a non-empty list of them';

const count = field(integer(1), REQUIRED, [1]);
const kernelSize = field(size2d(1), REQUIRED, [1, [2, 3]]);
/** PyTorch's pooling stride: the kernel size unless given. */
const strideOfKernel = field(size2d(1), (layer: Resolved) => layer.kernelSize, [1, [2, 1]], 'kernelSize');

const batchNorm = {
  numFeatures: count,
  eps: field(number(0), 1e-5, [0]),
  momentum: field(number(0, 1), 0.1, [0, 1]),
  affine: field(boolean, true, [false]),
  trackRunningStats: field(boolean, true, [false]),
};

const conv = (n: number) => ({
  inChannels: count,
  outChannels: count,
  kernelSize: field(sizeN(n, 1), REQUIRED, [1]),
  stride: field(sizeN(n, 1), 1, [2]),
  padding: field(sizeN(n, 0), 0, [0, 1]),
  dilation: field(sizeN(n, 1), 1, [2]),
  groups: field(integer(1), 1, [1]),
  bias: field(boolean, true, [false]),
});
// outputPadding's upper bound is the stride or dilation (checked across fields).
const convTranspose = (n: number) => ({ ...conv(n), outputPadding: field(sizeN(n, 0), 0, [0]) });
const adaptive = (n: number) => ({ outputSize: field(sizeN(n, 1), REQUIRED, [1]) });
const recurrent = {
  inputSize: count,
  hiddenSize: count,
  numLayers: field(integer(1), 1, [1, 2]),
  bias: field(boolean, true, [false]),
  batchFirst: field(boolean, false, [true]),
  dropout: field(number(0, 1), 0, [0, 1]),
  bidirectional: field(boolean, false, [true]),
};
/** Layers that take or return several tensors (recurrent state, attention's query, key and value): modules' forwards call them, nn.sequential cannot. */
export const MULTI_TENSOR = ['lstm', 'gru', 'rnn', 'multiheadAttention'];
const anyNumber = number(-Infinity);
const positions = (size: unknown): number[] => (Array.isArray(size) ? (size as number[]) : [size as number]);

/** Rules across a layer's fields (PyTorch's constructor checks), on the resolved layer. */
function crossFieldProblem(layer: Resolved): string | undefined {
  const type = layer.type as string;
  if (
    ['conv1d', 'conv2d', 'conv3d', 'convTranspose1d', 'convTranspose2d'].includes(type) &&
    ((layer.inChannels as number) % (layer.groups as number) !== 0 ||
      (layer.outChannels as number) % (layer.groups as number) !== 0)
  ) {
    return `inChannels (${layer.inChannels}) and outChannels (${layer.outChannels}) must both be divisible by groups (${layer.groups})`;
  }
  if (type.startsWith('convTranspose')) {
    const stride = positions(layer.stride);
    const dilation = positions(layer.dilation);
    const bad = positions(layer.outputPadding).findIndex(
      (pad, i) => pad >= Math.max(stride[i % stride.length], dilation[i % dilation.length]),
    );
    if (bad >= 0)
      return `outputPadding (${JSON.stringify(layer.outputPadding)}) must be smaller than stride or dilation in each dimension`;
  }
  if (type === 'groupNorm' && (layer.numChannels as number) % (layer.numGroups as number) !== 0) {
    return `numChannels (${layer.numChannels}) must be divisible by numGroups (${layer.numGroups})`;
  }
  if (type === 'upsample') {
    if ((layer.size === undefined) === (layer.scaleFactor === undefined))
      return 'give exactly one of size and scaleFactor';
    if (layer.mode === 'nearest' && layer.alignCorners === true) return "alignCorners applies to mode 'bilinear' only";
  }
  if (type === 'multiheadAttention' && (layer.embedDim as number) % (layer.numHeads as number) !== 0) {
    return `embedDim (${layer.embedDim}) must be divisible by numHeads (${layer.numHeads})`;
  }
  if (type === 'lstm' && (layer.projSize as number) >= (layer.hiddenSize as number)) {
    return `projSize (${layer.projSize}) must be smaller than hiddenSize (${layer.hiddenSize})`;
  }
  const rows = layer.numEmbeddings as number;
  if (
    type === 'embedding' &&
    layer.paddingIdx !== undefined &&
    ((layer.paddingIdx as number) < -rows || (layer.paddingIdx as number) >= rows)
  ) {
    return `paddingIdx must be in [${-rows}, ${rows - 1}], got ${layer.paddingIdx}`;
  }
  return undefined;
}

export const layers = new Variants(
  'layer type',
  {
    linear: { inFeatures: count, outFeatures: count, bias: field(boolean, true, [false]) },
    conv2d: {
      inChannels: count,
      outChannels: count,
      kernelSize,
      stride: field(size2d(1), 1, [[1, 2]]),
      padding: field(size2d(0), 0, [0, [1, 0]]),
      dilation: field(size2d(1), 1, [[1, 2]]),
      groups: field(integer(1), 1, [1]),
      bias: field(boolean, true, [false]),
    },
    maxPool2d: {
      kernelSize,
      stride: strideOfKernel,
      padding: field(size2d(0), 0, [0]),
      dilation: field(size2d(1), 1, [1]),
      ceilMode: field(boolean, false, [true]),
    },
    avgPool2d: {
      kernelSize,
      stride: strideOfKernel,
      padding: field(size2d(0), 0, [0]),
      ceilMode: field(boolean, false, [true]),
      countIncludePad: field(boolean, true, [false]),
    },
    batchNorm1d: batchNorm,
    batchNorm2d: batchNorm,
    layerNorm: {
      normalizedShape: field(shape, REQUIRED, [1, [1, 2]]),
      eps: field(number(0), 1e-5, [0]),
      elementwiseAffine: field(boolean, true, [false]),
    },
    dropout: { p: field(number(0, 1), 0.5, [0, 1]) },
    flatten: { startDim: field(anyInteger, 1, [0]), endDim: field(anyInteger, -1, [-1]) },
    relu: {},
    tanh: {},
    sigmoid: {},
    gelu: { approximate: field(oneOf('none', 'tanh'), 'none', ['tanh']) },
    softmax: { dim: field(anyInteger, -1, [1]) },
    logSoftmax: { dim: field(anyInteger, -1, [1]) },
    embedding: { numEmbeddings: count, embeddingDim: count, paddingIdx: field(anyInteger, undefined, [0]) },
    conv1d: conv(1),
    conv3d: conv(3),
    convTranspose1d: convTranspose(1),
    convTranspose2d: convTranspose(2),
    maxPool1d: {
      kernelSize: field(sizeN(1, 1), REQUIRED, [1, 2]),
      stride: field(sizeN(1, 1), (layer: Resolved) => layer.kernelSize, [1], 'kernelSize'),
      padding: field(sizeN(1, 0), 0, [0]),
      dilation: field(sizeN(1, 1), 1, [1]),
      ceilMode: field(boolean, false, [true]),
    },
    avgPool1d: {
      kernelSize: field(sizeN(1, 1), REQUIRED, [1, 2]),
      stride: field(sizeN(1, 1), (layer: Resolved) => layer.kernelSize, [1], 'kernelSize'),
      padding: field(sizeN(1, 0), 0, [0]),
      ceilMode: field(boolean, false, [true]),
      countIncludePad: field(boolean, true, [false]),
    },
    multiheadAttention: {
      embedDim: count,
      numHeads: count,
      dropout: field(number(0, 1), 0, [0, 1]),
      bias: field(boolean, true, [false]),
      batchFirst: field(boolean, false, [true]),
    },
    lstm: { ...recurrent, projSize: field(integer(0), 0, [0]) },
    gru: recurrent,
    rnn: { ...recurrent, nonlinearity: field(oneOf('tanh', 'relu'), 'tanh', ['relu']) },
    adaptiveAvgPool1d: adaptive(1),
    adaptiveAvgPool2d: adaptive(2),
    adaptiveMaxPool2d: adaptive(2),
    batchNorm3d: batchNorm,
    syncBatchNorm: batchNorm,
    groupNorm: {
      numGroups: count,
      numChannels: count,
      eps: field(number(0), 1e-5, [0]),
      affine: field(boolean, true, [false]),
    },
    instanceNorm2d: {
      numFeatures: count,
      eps: field(number(0), 1e-5, [0]),
      momentum: field(number(0, 1), 0.1, [0, 1]),
      affine: field(boolean, false, [true]),
      trackRunningStats: field(boolean, false, [true]),
    },
    rmsNorm: {
      normalizedShape: field(shape, REQUIRED, [1, [1, 2]]),
      /** Unset: the input dtype's machine epsilon (torch.finfo(dtype).eps), as PyTorch. */
      eps: field(number(0), undefined, [0, 1e-6]),
      elementwiseAffine: field(boolean, true, [false]),
    },
    dropout2d: { p: field(number(0, 1), 0.5, [0, 1]) },
    identity: {},
    upsample: {
      size: field(size2d(1), undefined, [1, [2, 3]]),
      scaleFactor: field(number(0, Infinity, true), undefined, [0.5, 2]),
      mode: field(oneOf('nearest', 'bilinear'), 'nearest', ['nearest', 'bilinear']),
      alignCorners: field(boolean, false, [true]),
    },
    pixelShuffle: { upscaleFactor: count },
    unflatten: { dim: field(anyInteger, REQUIRED, [1]), unflattenedSize: field(shape, REQUIRED, [[2, 2]]) },
    leakyRelu: { negativeSlope: field(anyNumber, 0.01, [0.2]) },
    elu: { alpha: field(anyNumber, 1, [0.5]) },
    silu: {},
    mish: {},
    softplus: { beta: field(number(0, Infinity, true), 1, [2]), threshold: field(anyNumber, 20, [10]) },
    hardswish: {},
    relu6: {},
    hardsigmoid: {},
    hardtanh: { minVal: field(anyNumber, -1, [0]), maxVal: field(anyNumber, 1, [6]) },
    prelu: { numParameters: field(integer(1), 1, [1, 3]), init: field(anyNumber, 0.25, [0]) },
  },
  crossFieldProblem,
  'type',
);
