// The parameterless layers of torch.nn as modules whose forward records their
// F op, as torch.nn.ReLU's forward returns F.relu(input): one run path and one
// export path for each piece of math. Each layer type is one row below.
import { layers } from '../layer-schemas';
import type { LayerSpec } from '../layer-specs';
import { F } from './functional';
import { className, Layer, Module } from './module';
import type { Tensor } from './tensor';
import { activeTrace } from './trace';

// Resolved by the layer schema: every option present, its type checked.
type Resolved = Record<string, unknown>;
type MaxPoolOptions = Parameters<typeof F.maxPool2d>[2];
type AvgPoolOptions = Parameters<typeof F.avgPool2d>[2];
type InterpolateOptions = Parameters<typeof F.interpolate>[1];
type Size = number | number[];

/** Each parameterless layer's forward over its resolved options. */
const FORWARDS = {
  relu: (x: Tensor) => F.relu(x),
  tanh: (x: Tensor) => F.tanh(x),
  sigmoid: (x: Tensor) => F.sigmoid(x),
  gelu: (x: Tensor, o: Resolved) => F.gelu(x, o.approximate as 'none' | 'tanh'),
  softmax: (x: Tensor, o: Resolved) => F.softmax(x, o.dim as number),
  logSoftmax: (x: Tensor, o: Resolved) => F.logSoftmax(x, o.dim as number),
  dropout: (x: Tensor, o: Resolved) => F.dropout(x, o.p as number),
  dropout2d: (x: Tensor, o: Resolved) => F.dropout2d(x, o.p as number),
  flatten: (x: Tensor, o: Resolved) => x.flatten(o.startDim as number, o.endDim as number),
  unflatten: (x: Tensor, o: Resolved) => x.unflatten(o.dim as number, o.unflattenedSize as number[]),
  identity: (x: Tensor) => x,
  maxPool1d: (x: Tensor, o: Resolved) => F.maxPool1d(x, o.kernelSize as Size, o as MaxPoolOptions),
  maxPool2d: (x: Tensor, o: Resolved) => F.maxPool2d(x, o.kernelSize as Size, o as MaxPoolOptions),
  avgPool1d: (x: Tensor, o: Resolved) => F.avgPool1d(x, o.kernelSize as Size, o as AvgPoolOptions),
  avgPool2d: (x: Tensor, o: Resolved) => F.avgPool2d(x, o.kernelSize as Size, o as AvgPoolOptions),
  adaptiveAvgPool1d: (x: Tensor, o: Resolved) => F.adaptiveAvgPool1d(x, o.outputSize as Size),
  adaptiveAvgPool2d: (x: Tensor, o: Resolved) => F.adaptiveAvgPool2d(x, o.outputSize as Size),
  adaptiveMaxPool2d: (x: Tensor, o: Resolved) => F.adaptiveMaxPool2d(x, o.outputSize as Size),
  upsample: (x: Tensor, o: Resolved) => F.interpolate(x, o as InterpolateOptions),
  pixelShuffle: (x: Tensor, o: Resolved) => F.pixelShuffle(x, o.upscaleFactor as number),
  leakyRelu: (x: Tensor, o: Resolved) => F.leakyRelu(x, o.negativeSlope as number),
  elu: (x: Tensor, o: Resolved) => F.elu(x, o.alpha as number),
  softplus: (x: Tensor, o: Resolved) => F.softplus(x, o.beta as number, o.threshold as number),
  silu: (x: Tensor) => F.silu(x),
  mish: (x: Tensor) => F.mish(x),
  hardswish: (x: Tensor) => F.hardswish(x),
  relu6: (x: Tensor) => F.relu6(x),
  hardsigmoid: (x: Tensor) => F.hardsigmoid(x),
  hardtanh: (x: Tensor, o: Resolved) => F.hardtanh(x, o.minVal as number, o.maxVal as number),
};

export type FunctionalLayerType = keyof typeof FORWARDS;
export type FunctionalLayerSpec = Extract<LayerSpec, { type: FunctionalLayerType }>;

export const isFunctionalLayerType = (type: string): type is FunctionalLayerType => Object.hasOwn(FORWARDS, type);

/** A parameterless layer (nn.relu(), nn.maxPool2d(2), ...): its options, and a forward that records its F op. */
export class FunctionalLayer<Spec extends FunctionalLayerSpec = FunctionalLayerSpec> extends Module {
  /** The layer's type and options, as nn.sequential takes them. */
  declare readonly spec: Spec;

  constructor(spec: Spec) {
    super();
    Object.defineProperty(this, 'spec', { value: spec, enumerable: false });
  }

  get type(): Spec['type'] {
    return this.spec.type;
  }

  override get className(): string {
    return className(this.spec.type);
  }

  forward(input: Tensor): Tensor {
    const resolved = layers.resolve(this.spec, activeTrace(this.spec.type).scope || 'model') as Resolved;
    return FORWARDS[this.spec.type](input, resolved);
  }
}

/** A layer spec as its module: parameterless layers record their F op, the others are built in C++. */
export const layerModule = (spec: LayerSpec): Layer | FunctionalLayer =>
  isFunctionalLayerType(spec.type) ? new FunctionalLayer(spec as FunctionalLayerSpec) : new Layer(spec);
