// nn: the builders of models, modules and layers. The factory functions take
// PyTorch's positional arguments (nn.conv2d(1, 32, 3, { padding: 1 })) and
// return modules, usable in nn.sequential and as fields of a TypeScript module:
// layers with parameters are built in C++ as torch::nn modules, the others
// record their F op. Defaults are the layer schema's (layer-schemas.ts).
import type {
  ActivationSpec,
  AdaptivePoolSpec,
  AvgPool1dSpec,
  AvgPool2dSpec,
  BatchNorm3dSpec,
  BatchNormSpec,
  SyncBatchNormSpec,
  Conv1dSpec,
  Conv2dSpec,
  Conv3dSpec,
  ConvTranspose1dSpec,
  ConvTranspose2dSpec,
  Dropout2dSpec,
  DropoutSpec,
  EluSpec,
  EmbeddingSpec,
  FlattenSpec,
  GRUSpec,
  GeluSpec,
  GroupNormSpec,
  HardtanhSpec,
  IdentitySpec,
  InstanceNorm2dSpec,
  LSTMSpec,
  LayerNormSpec,
  LayerSpec,
  LeakyReluSpec,
  LinearSpec,
  MaxPool1dSpec,
  MaxPool2dSpec,
  MultiheadAttentionSpec,
  PixelShuffleSpec,
  PlainActivationSpec,
  PreluSpec,
  RNNSpec,
  RmsNormSpec,
  Size1d,
  Size2d,
  Size3d,
  SoftmaxSpec,
  SoftplusSpec,
  UnflattenSpec,
  UpsampleSpec,
} from './layer-specs';
import type { ScriptParameter, ScriptSpec, TorchScriptFileSpec } from './model-spec';
import { FunctionalLayer, type FunctionalLayerSpec, layerModule } from './module/functional-layers';
import { init } from './module/init';
import { Buffer, Layer, Module, ModuleDict, ModuleList, Parameter, Sequential } from './module/module';
import { GRU, LSTM, RNN } from './module/recurrent';
import { MultiheadAttention } from './module/attention';
import {
  TransformerDecoderLayer,
  TransformerEncoder,
  TransformerEncoderLayer,
  type TransformerLayerOptions,
} from './module/transformer';
// Module.prototype.summary is defined beside the tracer.
import './module/summary';

type Options<Spec, Required extends keyof Spec> = Omit<Spec, 'type' | Required>;

const layer = <Spec extends LayerSpec>(spec: Spec): Layer<Spec> => new Layer(spec);
const functional = <Spec extends FunctionalLayerSpec>(spec: Spec): FunctionalLayer<Spec> => new FunctionalLayer(spec);

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
    new Sequential(modules.map((module) => (module instanceof Module ? module : layerModule(module)))),
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
  multiheadAttention: (
    embedDim: number,
    numHeads: number,
    options: Options<MultiheadAttentionSpec, 'embedDim' | 'numHeads'> = {},
  ): MultiheadAttention => new MultiheadAttention({ type: 'multiheadAttention', embedDim, numHeads, ...options }),
  /** torch.nn.TransformerEncoderLayer: `layer.forward(src, { srcMask, srcKeyPaddingMask, isCausal })`. */
  transformerEncoderLayer: (
    dModel: number,
    nhead: number,
    options: TransformerLayerOptions = {},
  ): TransformerEncoderLayer => new TransformerEncoderLayer(dModel, nhead, options),
  /** torch.nn.TransformerDecoderLayer: `layer.forward(tgt, memory, { tgtMask, memoryKeyPaddingMask, tgtIsCausal, ... })`. */
  transformerDecoderLayer: (
    dModel: number,
    nhead: number,
    options: TransformerLayerOptions = {},
  ): TransformerDecoderLayer => new TransformerDecoderLayer(dModel, nhead, options),
  /** torch.nn.TransformerEncoder: numLayers copies of encoderLayer (the same initial weights, as PyTorch's deep copies), then norm. */
  transformerEncoder: (
    encoderLayer: TransformerEncoderLayer,
    numLayers: number,
    options: { norm?: Layer } = {},
  ): TransformerEncoder => new TransformerEncoder(encoderLayer, numLayers, options),
  linear: (
    inFeatures: number,
    outFeatures: number,
    options: Options<LinearSpec, 'inFeatures' | 'outFeatures'> = {},
  ): Layer<LinearSpec> => layer({ type: 'linear', inFeatures, outFeatures, ...options }),
  conv2d: (
    inChannels: number,
    outChannels: number,
    kernelSize: Size2d,
    options: Options<Conv2dSpec, 'inChannels' | 'outChannels' | 'kernelSize'> = {},
  ): Layer<Conv2dSpec> => layer({ type: 'conv2d', inChannels, outChannels, kernelSize, ...options }),
  maxPool2d: (kernelSize: Size2d, options: Options<MaxPool2dSpec, 'kernelSize'> = {}): FunctionalLayer<MaxPool2dSpec> =>
    functional({ type: 'maxPool2d', kernelSize, ...options }),
  avgPool2d: (kernelSize: Size2d, options: Options<AvgPool2dSpec, 'kernelSize'> = {}): FunctionalLayer<AvgPool2dSpec> =>
    functional({ type: 'avgPool2d', kernelSize, ...options }),
  batchNorm1d: (numFeatures: number, options: Options<BatchNormSpec, 'numFeatures'> = {}): Layer<BatchNormSpec> =>
    layer({ type: 'batchNorm1d', numFeatures, ...options }),
  batchNorm2d: (numFeatures: number, options: Options<BatchNormSpec, 'numFeatures'> = {}): Layer<BatchNormSpec> =>
    layer({ type: 'batchNorm2d', numFeatures, ...options }),
  layerNorm: (
    normalizedShape: number | number[],
    options: Options<LayerNormSpec, 'normalizedShape'> = {},
  ): Layer<LayerNormSpec> => layer({ type: 'layerNorm', normalizedShape, ...options }),
  dropout: (p?: number): FunctionalLayer<DropoutSpec> => functional({ type: 'dropout', p }),
  flatten: (startDim?: number, endDim?: number): FunctionalLayer<FlattenSpec> =>
    functional({ type: 'flatten', startDim, endDim }),
  relu: (): FunctionalLayer<ActivationSpec> => functional({ type: 'relu' }),
  tanh: (): FunctionalLayer<ActivationSpec> => functional({ type: 'tanh' }),
  sigmoid: (): FunctionalLayer<ActivationSpec> => functional({ type: 'sigmoid' }),
  gelu: (approximate?: 'none' | 'tanh'): FunctionalLayer<GeluSpec> => functional({ type: 'gelu', approximate }),
  softmax: (dim?: number): FunctionalLayer<SoftmaxSpec> => functional({ type: 'softmax', dim }),
  logSoftmax: (dim?: number): FunctionalLayer<SoftmaxSpec> => functional({ type: 'logSoftmax', dim }),
  embedding: (
    numEmbeddings: number,
    embeddingDim: number,
    options: Options<EmbeddingSpec, 'numEmbeddings' | 'embeddingDim'> = {},
  ): Layer<EmbeddingSpec> => layer({ type: 'embedding', numEmbeddings, embeddingDim, ...options }),
  conv1d: (
    inChannels: number,
    outChannels: number,
    kernelSize: Size1d,
    options: Options<Conv1dSpec, 'inChannels' | 'outChannels' | 'kernelSize'> = {},
  ): Layer<Conv1dSpec> => layer({ type: 'conv1d', inChannels, outChannels, kernelSize, ...options }),
  conv3d: (
    inChannels: number,
    outChannels: number,
    kernelSize: Size3d,
    options: Options<Conv3dSpec, 'inChannels' | 'outChannels' | 'kernelSize'> = {},
  ): Layer<Conv3dSpec> => layer({ type: 'conv3d', inChannels, outChannels, kernelSize, ...options }),
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
  maxPool1d: (kernelSize: Size1d, options: Options<MaxPool1dSpec, 'kernelSize'> = {}): FunctionalLayer<MaxPool1dSpec> =>
    functional({ type: 'maxPool1d', kernelSize, ...options }),
  avgPool1d: (kernelSize: Size1d, options: Options<AvgPool1dSpec, 'kernelSize'> = {}): FunctionalLayer<AvgPool1dSpec> =>
    functional({ type: 'avgPool1d', kernelSize, ...options }),
  adaptiveAvgPool1d: (outputSize: Size1d): FunctionalLayer<AdaptivePoolSpec> =>
    functional({ type: 'adaptiveAvgPool1d', outputSize }),
  adaptiveAvgPool2d: (outputSize: Size2d): FunctionalLayer<AdaptivePoolSpec> =>
    functional({ type: 'adaptiveAvgPool2d', outputSize }),
  adaptiveMaxPool2d: (outputSize: Size2d): FunctionalLayer<AdaptivePoolSpec> =>
    functional({ type: 'adaptiveMaxPool2d', outputSize }),
  batchNorm3d: (numFeatures: number, options: Options<BatchNorm3dSpec, 'numFeatures'> = {}): Layer<BatchNorm3dSpec> =>
    layer({ type: 'batchNorm3d', numFeatures, ...options }),
  syncBatchNorm: (
    numFeatures: number,
    options: Options<SyncBatchNormSpec, 'numFeatures'> = {},
  ): Layer<SyncBatchNormSpec> => layer({ type: 'syncBatchNorm', numFeatures, ...options }),
  groupNorm: (
    numGroups: number,
    numChannels: number,
    options: Options<GroupNormSpec, 'numGroups' | 'numChannels'> = {},
  ): Layer<GroupNormSpec> => layer({ type: 'groupNorm', numGroups, numChannels, ...options }),
  instanceNorm2d: (
    numFeatures: number,
    options: Options<InstanceNorm2dSpec, 'numFeatures'> = {},
  ): Layer<InstanceNorm2dSpec> => layer({ type: 'instanceNorm2d', numFeatures, ...options }),
  rmsNorm: (
    normalizedShape: number | number[],
    options: Options<RmsNormSpec, 'normalizedShape'> = {},
  ): Layer<RmsNormSpec> => layer({ type: 'rmsNorm', normalizedShape, ...options }),
  dropout2d: (p?: number): FunctionalLayer<Dropout2dSpec> => functional({ type: 'dropout2d', p }),
  identity: (): FunctionalLayer<IdentitySpec> => functional({ type: 'identity' }),
  upsample: (options: Options<UpsampleSpec, never>): FunctionalLayer<UpsampleSpec> =>
    functional({ type: 'upsample', ...options }),
  pixelShuffle: (upscaleFactor: number): FunctionalLayer<PixelShuffleSpec> =>
    functional({ type: 'pixelShuffle', upscaleFactor }),
  unflatten: (dim: number, unflattenedSize: number[]): FunctionalLayer<UnflattenSpec> =>
    functional({ type: 'unflatten', dim, unflattenedSize }),
  leakyRelu: (negativeSlope?: number): FunctionalLayer<LeakyReluSpec> =>
    functional({ type: 'leakyRelu', negativeSlope }),
  elu: (alpha?: number): FunctionalLayer<EluSpec> => functional({ type: 'elu', alpha }),
  silu: (): FunctionalLayer<PlainActivationSpec> => functional({ type: 'silu' }),
  mish: (): FunctionalLayer<PlainActivationSpec> => functional({ type: 'mish' }),
  softplus: (beta?: number, threshold?: number): FunctionalLayer<SoftplusSpec> =>
    functional({ type: 'softplus', beta, threshold }),
  hardswish: (): FunctionalLayer<PlainActivationSpec> => functional({ type: 'hardswish' }),
  /** torch.nn.ReLU6: min(max(x, 0), 6). */
  relu6: (): FunctionalLayer<PlainActivationSpec> => functional({ type: 'relu6' }),
  hardsigmoid: (): FunctionalLayer<PlainActivationSpec> => functional({ type: 'hardsigmoid' }),
  hardtanh: (minVal?: number, maxVal?: number): FunctionalLayer<HardtanhSpec> =>
    functional({ type: 'hardtanh', minVal, maxVal }),
  prelu: (numParameters?: number, init?: number): Layer<PreluSpec> => layer({ type: 'prelu', numParameters, init }),
};
