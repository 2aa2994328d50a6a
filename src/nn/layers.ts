// Layers described as plain data, built in C++ as torch::nn modules. Names and
// defaults are PyTorch's, in camelCase; the factory functions take PyTorch's
// positional arguments (nn.conv2d(1, 32, 3, { padding: 1 })) and return
// modules, usable in nn.sequential and as fields of a TypeScript module.
import type { GraphModelSpec } from './module/graph-model';
import { init } from './module/init';
import { Buffer, Layer, Module, ModuleDict, ModuleList, Parameter, Sequential } from './module/module';
import { GRU, LSTM, RNN } from './module/recurrent';
import { MultiheadAttention } from './module/attention';
import { TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer, type TransformerLayerOptions } from './module/transformer';

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

export type Size1d = number | [number];
export type Size3d = number | [number, number, number];
/** nn.conv1d / nn.conv3d (torch.nn.Conv1d/3d): the options of conv2d, per spatial dimension. */
export interface ConvNdSpec<Size> {
  inChannels: number;
  outChannels: number;
  kernelSize: Size;
  stride?: Size;
  padding?: Size;
  dilation?: Size;
  groups?: number;
  bias?: boolean;
}
export interface Conv1dSpec extends ConvNdSpec<Size1d> { type: 'conv1d' }
export interface Conv3dSpec extends ConvNdSpec<Size3d> { type: 'conv3d' }
/** nn.convTranspose1d / 2d (torch.nn.ConvTranspose1d/2d). */
export interface ConvTranspose1dSpec extends ConvNdSpec<Size1d> { type: 'convTranspose1d'; outputPadding?: Size1d }
export interface ConvTranspose2dSpec extends ConvNdSpec<Size2d> { type: 'convTranspose2d'; outputPadding?: Size2d }
/** nn.maxPool1d (torch.nn.MaxPool1d); stride defaults to kernelSize. */
export interface MaxPool1dSpec { type: 'maxPool1d'; kernelSize: Size1d; stride?: Size1d; padding?: Size1d; dilation?: Size1d; ceilMode?: boolean }
/** nn.avgPool1d (torch.nn.AvgPool1d); stride defaults to kernelSize. */
export interface AvgPool1dSpec { type: 'avgPool1d'; kernelSize: Size1d; stride?: Size1d; padding?: Size1d; ceilMode?: boolean; countIncludePad?: boolean }
/** nn.adaptiveAvgPool1d / 2d, nn.adaptiveMaxPool2d: pools to outputSize whatever the input size. */
export interface AdaptivePoolSpec { type: 'adaptiveAvgPool1d' | 'adaptiveAvgPool2d' | 'adaptiveMaxPool2d'; outputSize: number | number[] }
/** nn.batchNorm3d (torch.nn.BatchNorm3d). */
export interface BatchNorm3dSpec extends Omit<BatchNormSpec, 'type'> { type: 'batchNorm3d' }
/** nn.groupNorm (torch.nn.GroupNorm): numChannels split into numGroups groups. */
export interface GroupNormSpec { type: 'groupNorm'; numGroups: number; numChannels: number; eps?: number; affine?: boolean }
/** nn.instanceNorm2d (torch.nn.InstanceNorm2d): no affine parameters or running statistics by default. */
export interface InstanceNorm2dSpec { type: 'instanceNorm2d'; numFeatures: number; eps?: number; momentum?: number; affine?: boolean; trackRunningStats?: boolean }
/** nn.rmsNorm (torch.nn.RMSNorm): eps unset is the input dtype's machine epsilon. */
export interface RmsNormSpec { type: 'rmsNorm'; normalizedShape: number | number[]; eps?: number; elementwiseAffine?: boolean }
/** nn.dropout2d: zeroes whole channels while training (torch.nn.Dropout2d). */
export interface Dropout2dSpec { type: 'dropout2d'; p?: number }
/** nn.identity: its input, unchanged. */
export interface IdentitySpec { type: 'identity' }
/** nn.upsample (torch.nn.Upsample): exactly one of size and scaleFactor. */
export interface UpsampleSpec { type: 'upsample'; size?: Size2d; scaleFactor?: number; mode?: 'nearest' | 'bilinear'; alignCorners?: boolean }
/** nn.pixelShuffle (torch.nn.PixelShuffle): [N, C·r², H, W] to [N, C, H·r, W·r]. */
export interface PixelShuffleSpec { type: 'pixelShuffle'; upscaleFactor: number }
/** nn.unflatten (torch.nn.Unflatten): dimension dim into unflattenedSize. */
export interface UnflattenSpec { type: 'unflatten'; dim: number; unflattenedSize: number[] }
/** nn.leakyRelu, nn.elu, nn.softplus, nn.hardtanh with their parameters; nn.silu, nn.mish, nn.hardswish, nn.relu6, nn.hardsigmoid without. */
export interface LeakyReluSpec { type: 'leakyRelu'; negativeSlope?: number }
export interface HardtanhSpec { type: 'hardtanh'; minVal?: number; maxVal?: number }
export interface EluSpec { type: 'elu'; alpha?: number }
export interface SoftplusSpec { type: 'softplus'; beta?: number; threshold?: number }
export interface PlainActivationSpec { type: 'silu' | 'mish' | 'hardswish' | 'relu6' | 'hardsigmoid' }
/** nn.prelu (torch.nn.PReLU): a learned slope, one or one per channel. */
export interface PreluSpec { type: 'prelu'; numParameters?: number; init?: number }

/** One layer of a sequential model, as JSON (what the nn.* builders return). */
/** What nn.lstm, nn.gru and nn.rnn share (torch.nn.LSTM/GRU/RNN's arguments). */
interface RecurrentSpecFields {
  inputSize: number;
  hiddenSize: number;
  /** Stacked layers. Default 1. */
  numLayers?: number;
  bias?: boolean;
  /** Inputs and outputs as [N, L, features] instead of [L, N, features]. Default false. */
  batchFirst?: boolean;
  /** Dropout on each layer's output but the last, while training. Default 0. */
  dropout?: number;
  bidirectional?: boolean;
}
/** nn.lstm (torch.nn.LSTM). */
export interface LSTMSpec extends RecurrentSpecFields { type: 'lstm'; projSize?: number }
/** nn.gru (torch.nn.GRU). */
export interface GRUSpec extends RecurrentSpecFields { type: 'gru' }
/** nn.rnn (torch.nn.RNN). */
export interface RNNSpec extends RecurrentSpecFields { type: 'rnn'; nonlinearity?: 'tanh' | 'relu' }

/** nn.multiheadAttention (torch.nn.MultiheadAttention; keys and values of embedDim features). */
export interface MultiheadAttentionSpec {
  type: 'multiheadAttention';
  embedDim: number;
  numHeads: number;
  /** Dropout on the attention weights while training. Default 0. */
  dropout?: number;
  bias?: boolean;
  /** Inputs and output as [N, L, E] instead of [L, N, E]. Default false. */
  batchFirst?: boolean;
}

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
  | EmbeddingSpec
  | Conv1dSpec
  | Conv3dSpec
  | ConvTranspose1dSpec
  | ConvTranspose2dSpec
  | MaxPool1dSpec
  | AvgPool1dSpec
  | AdaptivePoolSpec
  | BatchNorm3dSpec
  | GroupNormSpec
  | InstanceNorm2dSpec
  | RmsNormSpec
  | Dropout2dSpec
  | IdentitySpec
  | UpsampleSpec
  | PixelShuffleSpec
  | UnflattenSpec
  | LeakyReluSpec
  | HardtanhSpec
  | EluSpec
  | SoftplusSpec
  | PlainActivationSpec
  | PreluSpec;

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
  /** An LSTM; use it in a module's forward: `const [out, [h, c]] = this.lstm.forward(x)`. */
  lstm: (inputSize: number, hiddenSize: number, options: Options<LSTMSpec, 'inputSize' | 'hiddenSize'> = {}): LSTM =>
    new LSTM({ type: 'lstm', inputSize, hiddenSize, ...options }),
  /** A GRU; `const [out, h] = this.gru.forward(x)`. */
  gru: (inputSize: number, hiddenSize: number, options: Options<GRUSpec, 'inputSize' | 'hiddenSize'> = {}): GRU =>
    new GRU({ type: 'gru', inputSize, hiddenSize, ...options }),
  /** An Elman RNN (tanh or relu); `const [out, h] = this.rnn.forward(x)`. */
  rnn: (inputSize: number, hiddenSize: number, options: Options<RNNSpec, 'inputSize' | 'hiddenSize'> = {}): RNN =>
    new RNN({ type: 'rnn', inputSize, hiddenSize, ...options }),
  /** Multi-head attention; `const [out] = this.attn.forward(q, k, v, { keyPaddingMask, attnMask, isCausal })`. */
  multiheadAttention: (embedDim: number, numHeads: number, options: Options<MultiheadAttentionSpec, 'embedDim' | 'numHeads'> = {}): MultiheadAttention =>
    new MultiheadAttention({ type: 'multiheadAttention', embedDim, numHeads, ...options }),
  /** torch.nn.TransformerEncoderLayer: `layer.forward(src, { srcMask, srcKeyPaddingMask, isCausal })`. */
  transformerEncoderLayer: (dModel: number, nhead: number, options: TransformerLayerOptions = {}): TransformerEncoderLayer =>
    new TransformerEncoderLayer(dModel, nhead, options),
  /** torch.nn.TransformerDecoderLayer: `layer.forward(tgt, memory, { tgtMask, memoryKeyPaddingMask, tgtIsCausal, ... })`. */
  transformerDecoderLayer: (dModel: number, nhead: number, options: TransformerLayerOptions = {}): TransformerDecoderLayer =>
    new TransformerDecoderLayer(dModel, nhead, options),
  /** torch.nn.TransformerEncoder: numLayers copies of encoderLayer (the same initial weights, as PyTorch's deep copies), then norm. */
  transformerEncoder: (encoderLayer: TransformerEncoderLayer, numLayers: number, options: { norm?: Layer } = {}): TransformerEncoder =>
    new TransformerEncoder(encoderLayer, numLayers, options),
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
  conv1d: (inChannels: number, outChannels: number, kernelSize: Size1d, options: Options<Conv1dSpec, 'inChannels' | 'outChannels' | 'kernelSize'> = {}): Layer<Conv1dSpec> =>
    layer({ type: 'conv1d', inChannels, outChannels, kernelSize, ...options }),
  conv3d: (inChannels: number, outChannels: number, kernelSize: Size3d, options: Options<Conv3dSpec, 'inChannels' | 'outChannels' | 'kernelSize'> = {}): Layer<Conv3dSpec> =>
    layer({ type: 'conv3d', inChannels, outChannels, kernelSize, ...options }),
  convTranspose1d: (
    inChannels: number,
    outChannels: number,
    kernelSize: Size1d,
    options: Options<ConvTranspose1dSpec, 'inChannels' | 'outChannels' | 'kernelSize'> = {},
  ): Layer<ConvTranspose1dSpec> => layer({ type: 'convTranspose1d', inChannels, outChannels, kernelSize, ...options }),
  convTranspose2d: (
    inChannels: number,
    outChannels: number,
    kernelSize: Size2d,
    options: Options<ConvTranspose2dSpec, 'inChannels' | 'outChannels' | 'kernelSize'> = {},
  ): Layer<ConvTranspose2dSpec> => layer({ type: 'convTranspose2d', inChannels, outChannels, kernelSize, ...options }),
  maxPool1d: (kernelSize: Size1d, options: Options<MaxPool1dSpec, 'kernelSize'> = {}): Layer<MaxPool1dSpec> => layer({ type: 'maxPool1d', kernelSize, ...options }),
  avgPool1d: (kernelSize: Size1d, options: Options<AvgPool1dSpec, 'kernelSize'> = {}): Layer<AvgPool1dSpec> => layer({ type: 'avgPool1d', kernelSize, ...options }),
  adaptiveAvgPool1d: (outputSize: Size1d): Layer<AdaptivePoolSpec> => layer({ type: 'adaptiveAvgPool1d', outputSize }),
  adaptiveAvgPool2d: (outputSize: Size2d): Layer<AdaptivePoolSpec> => layer({ type: 'adaptiveAvgPool2d', outputSize }),
  adaptiveMaxPool2d: (outputSize: Size2d): Layer<AdaptivePoolSpec> => layer({ type: 'adaptiveMaxPool2d', outputSize }),
  batchNorm3d: (numFeatures: number, options: Options<BatchNorm3dSpec, 'numFeatures'> = {}): Layer<BatchNorm3dSpec> => layer({ type: 'batchNorm3d', numFeatures, ...options }),
  groupNorm: (numGroups: number, numChannels: number, options: Options<GroupNormSpec, 'numGroups' | 'numChannels'> = {}): Layer<GroupNormSpec> =>
    layer({ type: 'groupNorm', numGroups, numChannels, ...options }),
  instanceNorm2d: (numFeatures: number, options: Options<InstanceNorm2dSpec, 'numFeatures'> = {}): Layer<InstanceNorm2dSpec> =>
    layer({ type: 'instanceNorm2d', numFeatures, ...options }),
  rmsNorm: (normalizedShape: number | number[], options: Options<RmsNormSpec, 'normalizedShape'> = {}): Layer<RmsNormSpec> =>
    layer({ type: 'rmsNorm', normalizedShape, ...options }),
  dropout2d: (p = 0.5): Layer<Dropout2dSpec> => layer({ type: 'dropout2d', p }),
  identity: (): Layer<IdentitySpec> => layer({ type: 'identity' }),
  upsample: (options: Options<UpsampleSpec, never>): Layer<UpsampleSpec> => layer({ type: 'upsample', ...options }),
  pixelShuffle: (upscaleFactor: number): Layer<PixelShuffleSpec> => layer({ type: 'pixelShuffle', upscaleFactor }),
  unflatten: (dim: number, unflattenedSize: number[]): Layer<UnflattenSpec> => layer({ type: 'unflatten', dim, unflattenedSize }),
  leakyRelu: (negativeSlope = 0.01): Layer<LeakyReluSpec> => layer({ type: 'leakyRelu', negativeSlope }),
  elu: (alpha = 1): Layer<EluSpec> => layer({ type: 'elu', alpha }),
  silu: (): Layer<PlainActivationSpec> => layer({ type: 'silu' }),
  mish: (): Layer<PlainActivationSpec> => layer({ type: 'mish' }),
  softplus: (beta = 1, threshold = 20): Layer<SoftplusSpec> => layer({ type: 'softplus', beta, threshold }),
  hardswish: (): Layer<PlainActivationSpec> => layer({ type: 'hardswish' }),
  /** torch.nn.ReLU6: min(max(x, 0), 6). */
  relu6: (): Layer<PlainActivationSpec> => layer({ type: 'relu6' }),
  hardsigmoid: (): Layer<PlainActivationSpec> => layer({ type: 'hardsigmoid' }),
  hardtanh: (minVal = -1, maxVal = 1): Layer<HardtanhSpec> => layer({ type: 'hardtanh', minVal, maxVal }),
  prelu: (numParameters = 1, init = 0.25): Layer<PreluSpec> => layer({ type: 'prelu', numParameters, init }),
};
