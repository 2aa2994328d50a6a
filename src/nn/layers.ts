// Layers described as plain data, built in C++ as torch::nn modules. Names and
// defaults are PyTorch's, in camelCase; the factory functions take PyTorch's
// positional arguments (nn.conv2d(1, 32, 3, { padding: 1 })) and return
// modules, usable in nn.sequential and as fields of a TypeScript module.
import type { GraphModelSpec } from './module/graph-model';
import { init } from './module/init';
import { Buffer, Layer, Module, ModuleDict, ModuleList, Parameter, Sequential } from './module/module';

export type Size2d = number | [number, number];

/** nn.linear: y = x Wᵀ + b over the last dimension (torch.nn.Linear). */
export interface LinearSpec { type: 'linear'; inFeatures: number; outFeatures: number; bias?: boolean }
/** nn.conv2d: 2-D convolution over [N, C, H, W] (torch.nn.Conv2d). */
export interface Conv2dSpec {
  type: 'conv2d';
  inChannels: number;
  outChannels: number;
  kernelSize: Size2d;
  stride?: Size2d;
  padding?: Size2d;
  dilation?: Size2d;
  groups?: number;
  bias?: boolean;
}
/** nn.maxPool2d (torch.nn.MaxPool2d). */
export interface MaxPool2dSpec {
  type: 'maxPool2d';
  kernelSize: Size2d;
  /** Defaults to kernelSize, as in PyTorch. */
  stride?: Size2d;
  padding?: Size2d;
  dilation?: Size2d;
  ceilMode?: boolean;
}
/** nn.avgPool2d (torch.nn.AvgPool2d). */
export interface AvgPool2dSpec {
  type: 'avgPool2d';
  kernelSize: Size2d;
  /** Defaults to kernelSize, as in PyTorch. */
  stride?: Size2d;
  padding?: Size2d;
  ceilMode?: boolean;
  countIncludePad?: boolean;
}
/** nn.batchNorm1d / nn.batchNorm2d (torch.nn.BatchNorm1d/2d). */
export interface BatchNormSpec {
  type: 'batchNorm1d' | 'batchNorm2d';
  numFeatures: number;
  eps?: number;
  momentum?: number;
  affine?: boolean;
  trackRunningStats?: boolean;
}
/** nn.layerNorm over the trailing normalizedShape (torch.nn.LayerNorm). */
export interface LayerNormSpec { type: 'layerNorm'; normalizedShape: number | number[]; eps?: number; elementwiseAffine?: boolean }
/** nn.dropout: zeroes elements with probability p while training (torch.nn.Dropout). */
export interface DropoutSpec { type: 'dropout'; p?: number }
/** nn.flatten: merges dimensions startDim..endDim (torch.nn.Flatten). */
export interface FlattenSpec { type: 'flatten'; startDim?: number; endDim?: number }
/** nn.relu, nn.tanh, nn.sigmoid. */
export interface ActivationSpec { type: 'relu' | 'tanh' | 'sigmoid' }
/** nn.gelu (torch.nn.GELU). */
export interface GeluSpec { type: 'gelu'; approximate?: 'none' | 'tanh' }
/** nn.softmax / nn.logSoftmax along dim. */
export interface SoftmaxSpec { type: 'softmax' | 'logSoftmax'; dim?: number }
/** nn.embedding: integer ids to vectors (torch.nn.Embedding). */
export interface EmbeddingSpec { type: 'embedding'; numEmbeddings: number; embeddingDim: number; paddingIdx?: number }

/** One layer of a sequential model, as JSON (what the nn.* builders return). */
export type LayerSpec =
  | LinearSpec
  | Conv2dSpec
  | MaxPool2dSpec
  | AvgPool2dSpec
  | BatchNormSpec
  | LayerNormSpec
  | DropoutSpec
  | FlattenSpec
  | ActivationSpec
  | GeluSpec
  | SoftmaxSpec
  | EmbeddingSpec;

/** A model that applies its layers in order, like PyTorch's nn.Sequential. */
export interface SequentialSpec {
  type: 'sequential';
  layers: LayerSpec[];
}

/** A TorchScript module saved by torch.jit.save, trained in place (its own training_step if it has one). */
export interface TorchScriptFileSpec {
  type: 'torchscript';
  path: string;
}

/** A parameter of a script model: its name (self.<name> in the source), values and shape. */
export interface ScriptParameter {
  name: string;
  data: Float32Array | Float64Array;
  shape: number[];
}

/** A TorchScript module written in TypeScript: methods as TorchScript source, plus named parameters. */
export interface ScriptSpec {
  type: 'script';
  source: string;
  parameters: ScriptParameter[];
}

/** A model the Trainer can build: sequential layers, a TorchScript file, TorchScript source, or a traced TypeScript module. */
export type ModelSpec = SequentialSpec | TorchScriptFileSpec | ScriptSpec | GraphModelSpec;

/** What a Trainer or Model takes as its model: a spec, or a TypeScript module (traced once). */
export type ModelLike = ModelSpec | Module;

type Options<Spec, Required extends keyof Spec> = Omit<Spec, 'type' | Required>;

const layer = <Spec extends LayerSpec>(spec: Spec): Layer<Spec> => new Layer(spec);

/** Builders of models, modules and layers, with PyTorch's names and defaults. */
export const nn = {
  Module,
  Parameter,
  Buffer,
  Layer,
  ModuleList,
  ModuleDict,
  Sequential,
  init,
  /** Modules (or layer specs) applied in order, named 0, 1, ... as torch.nn.Sequential. */
  sequential: (...modules: (Module | LayerSpec)[]): Sequential =>
    new Sequential(modules.map((module) => (module instanceof Module ? module : new Layer(module)))),
  moduleList: <M extends Module>(modules: Iterable<M> = []): ModuleList<M> => new ModuleList(modules),
  moduleDict: <M extends Module>(modules: Record<string, M> = {}): ModuleDict<M> => new ModuleDict(modules),
  /** Loads a module saved by torch.jit.save. */
  torchScript: (path: string): TorchScriptFileSpec => ({ type: 'torchscript', path }),
  /**
   * A module from TorchScript source (def forward(self, x): ..., optionally training_step and
   * validation_step taking Dict[str, Tensor] with 'input' and 'target' and returning Dict[str, Tensor]).
   */
  script: (source: string, parameters: ScriptParameter[]): ScriptSpec => ({ type: 'script', source, parameters }),
  linear: (inFeatures: number, outFeatures: number, options: Options<LinearSpec, 'inFeatures' | 'outFeatures'> = {}): Layer<LinearSpec> =>
    layer({ type: 'linear', inFeatures, outFeatures, ...options}),
  conv2d: (
    inChannels: number,
    outChannels: number,
    kernelSize: Size2d,
    options: Options<Conv2dSpec, 'inChannels' | 'outChannels' | 'kernelSize'> = {},
  ): Layer<Conv2dSpec> => layer({ type: 'conv2d', inChannels, outChannels, kernelSize, ...options}),
  maxPool2d: (kernelSize: Size2d, options: Options<MaxPool2dSpec, 'kernelSize'> = {}): Layer<MaxPool2dSpec> =>
    layer({ type: 'maxPool2d', kernelSize, ...options}),
  avgPool2d: (kernelSize: Size2d, options: Options<AvgPool2dSpec, 'kernelSize'> = {}): Layer<AvgPool2dSpec> =>
    layer({ type: 'avgPool2d', kernelSize, ...options}),
  batchNorm1d: (numFeatures: number, options: Options<BatchNormSpec, 'numFeatures'> = {}): Layer<BatchNormSpec> =>
    layer({ type: 'batchNorm1d', numFeatures, ...options}),
  batchNorm2d: (numFeatures: number, options: Options<BatchNormSpec, 'numFeatures'> = {}): Layer<BatchNormSpec> =>
    layer({ type: 'batchNorm2d', numFeatures, ...options}),
  layerNorm: (normalizedShape: number | number[], options: Options<LayerNormSpec, 'normalizedShape'> = {}): Layer<LayerNormSpec> =>
    layer({ type: 'layerNorm', normalizedShape, ...options}),
  dropout: (p = 0.5): Layer<DropoutSpec> => layer({ type: 'dropout', p}),
  flatten: (startDim = 1, endDim = -1): Layer<FlattenSpec> => layer({ type: 'flatten', startDim, endDim}),
  relu: (): Layer<ActivationSpec> => layer({ type: 'relu'}),
  tanh: (): Layer<ActivationSpec> => layer({ type: 'tanh'}),
  sigmoid: (): Layer<ActivationSpec> => layer({ type: 'sigmoid'}),
  gelu: (approximate: 'none' | 'tanh' = 'none'): Layer<GeluSpec> => layer({ type: 'gelu', approximate}),
  softmax: (dim = -1): Layer<SoftmaxSpec> => layer({ type: 'softmax', dim}),
  logSoftmax: (dim = -1): Layer<SoftmaxSpec> => layer({ type: 'logSoftmax', dim}),
  embedding: (numEmbeddings: number, embeddingDim: number, options: Options<EmbeddingSpec, 'numEmbeddings' | 'embeddingDim'> = {}): Layer<EmbeddingSpec> =>
    layer({ type: 'embedding', numEmbeddings, embeddingDim, ...options}),
};
