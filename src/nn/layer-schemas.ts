// Every layer type of nn.sequential: the fields each takes, with PyTorch's
// defaults (torch.nn's modules). The one owner of their rules and defaults:
// C++ builds the torch::nn modules from the resolved values.
import { firebrandError } from '../errors';
import { anyInteger, boolean, field, integer, number, oneOf, REQUIRED, Resolved, Rule, Variants } from '../options/schema';
import type { ModelLike, ModelSpec } from './layers';
import { traceModule } from './module/graph-model';
import { Layer, Module, Sequential } from './module/module';

/** An integer >= min, or a pair of them ([height, width]). */
const size2d = (min: number): Rule => (value) =>
  integer(min)(value) === undefined ||
  (Array.isArray(value) && value.length === 2 && value.every((size) => integer(min)(size) === undefined))
    ? undefined
    : `an integer >= ${min} or a list of 2`;

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
    layerNorm: { normalizedShape: field(shape, REQUIRED, [1, [1, 2]]), eps: field(number(0), 1e-5, [0]), elementwiseAffine: field(boolean, true, [false]) },
    dropout: { p: field(number(0, 1), 0.5, [0, 1]) },
    flatten: { startDim: field(anyInteger, 1, [0]), endDim: field(anyInteger, -1, [-1]) },
    relu: {},
    tanh: {},
    sigmoid: {},
    gelu: { approximate: field(oneOf('none', 'tanh'), 'none', ['tanh']) },
    softmax: { dim: field(anyInteger, -1, [1]) },
    logSoftmax: { dim: field(anyInteger, -1, [1]) },
    embedding: { numEmbeddings: count, embeddingDim: count, paddingIdx: field(anyInteger, undefined, [0]) },
  },
  (layer) => {
    if (layer.type === 'conv2d' && ((layer.inChannels as number) % (layer.groups as number) !== 0 || (layer.outChannels as number) % (layer.groups as number) !== 0)) {
      return `inChannels (${layer.inChannels}) and outChannels (${layer.outChannels}) must both be divisible by groups (${layer.groups})`;
    }
    const rows = layer.numEmbeddings as number;
    if (layer.type === 'embedding' && layer.paddingIdx !== undefined && ((layer.paddingIdx as number) < -rows || (layer.paddingIdx as number) >= rows)) {
      return `paddingIdx must be in [${-rows}, ${rows - 1}], got ${layer.paddingIdx}`;
    }
    return undefined;
  },
  'type',
);

/**
 * The model as C++ builds it: a sequential model's layers each checked and defaulted; a TypeScript
 * module traced (an nn.sequential of built-in layers stays the layer-by-layer model it always was).
 */
export function resolveModelSpec(model: ModelLike): ModelSpec {
  if (typeof model !== 'object' || model === null) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'model must be an nn.Module, nn.sequential(...), nn.torchScript(path) or nn.script(...)');
  }
  if (model instanceof Sequential && !model.namedChildren().every(([, child]) => child instanceof Layer)) return traceModule(model);
  if (model instanceof Module && !(model instanceof Sequential)) return traceModule(model);
  if (model.type !== 'sequential') return model;
  if (!Array.isArray(model.layers)) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'model.layers must be an array of layers (nn.linear(...), ...)');
  }
  return { type: 'sequential', layers: model.layers.map((layer, i) => layers.resolve(layer, `layers[${i}]`)) as never };
}
