// Layers described as plain data: each built-in layer's type and options, with
// PyTorch's names in camelCase. nn.sequential takes them, saved models keep
// them; layer-schemas.ts owns their rules and defaults.
export type Size2d = number | [number, number];

/** nn.linear: y = x Wᵀ + b over the last dimension (torch.nn.Linear). */
export interface LinearSpec {
  type: 'linear';
  inFeatures: number;
  outFeatures: number;
  bias?: boolean;
}
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
export interface LayerNormSpec {
  type: 'layerNorm';
  normalizedShape: number | number[];
  eps?: number;
  elementwiseAffine?: boolean;
}
/** nn.dropout: zeroes elements with probability p while training (torch.nn.Dropout). */
export interface DropoutSpec {
  type: 'dropout';
  p?: number;
}
/** nn.flatten: merges dimensions startDim..endDim (torch.nn.Flatten). */
export interface FlattenSpec {
  type: 'flatten';
  startDim?: number;
  endDim?: number;
}
/** nn.relu, nn.tanh, nn.sigmoid. */
export interface ActivationSpec {
  type: 'relu' | 'tanh' | 'sigmoid';
}
/** nn.gelu (torch.nn.GELU). */
export interface GeluSpec {
  type: 'gelu';
  approximate?: 'none' | 'tanh';
}
/** nn.softmax / nn.logSoftmax along dim. */
export interface SoftmaxSpec {
  type: 'softmax' | 'logSoftmax';
  dim?: number;
}
/** nn.embedding: integer ids to vectors (torch.nn.Embedding). */
export interface EmbeddingSpec {
  type: 'embedding';
  numEmbeddings: number;
  embeddingDim: number;
  paddingIdx?: number;
}

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
export interface Conv1dSpec extends ConvNdSpec<Size1d> {
  type: 'conv1d';
}
export interface Conv3dSpec extends ConvNdSpec<Size3d> {
  type: 'conv3d';
}
/** nn.convTranspose1d / 2d (torch.nn.ConvTranspose1d/2d). */
export interface ConvTranspose1dSpec extends ConvNdSpec<Size1d> {
  type: 'convTranspose1d';
  outputPadding?: Size1d;
}
export interface ConvTranspose2dSpec extends ConvNdSpec<Size2d> {
  type: 'convTranspose2d';
  outputPadding?: Size2d;
}
/** nn.maxPool1d (torch.nn.MaxPool1d); stride defaults to kernelSize. */
export interface MaxPool1dSpec {
  type: 'maxPool1d';
  kernelSize: Size1d;
  stride?: Size1d;
  padding?: Size1d;
  dilation?: Size1d;
  ceilMode?: boolean;
}
/** nn.avgPool1d (torch.nn.AvgPool1d); stride defaults to kernelSize. */
export interface AvgPool1dSpec {
  type: 'avgPool1d';
  kernelSize: Size1d;
  stride?: Size1d;
  padding?: Size1d;
  ceilMode?: boolean;
  countIncludePad?: boolean;
}
/** nn.adaptiveAvgPool1d / 2d, nn.adaptiveMaxPool2d: pools to outputSize whatever the input size. */
export interface AdaptivePoolSpec {
  type: 'adaptiveAvgPool1d' | 'adaptiveAvgPool2d' | 'adaptiveMaxPool2d';
  outputSize: number | number[];
}
/** nn.batchNorm3d (torch.nn.BatchNorm3d). */
export interface BatchNorm3dSpec extends Omit<BatchNormSpec, 'type'> {
  type: 'batchNorm3d';
}
/**
 * nn.syncBatchNorm (torch.nn.SyncBatchNorm): input [N, C, *]; while training in a distributed run, normalized by
 * the statistics of every rank's batch together; otherwise a batch norm.
 */
export interface SyncBatchNormSpec extends Omit<BatchNormSpec, 'type'> {
  type: 'syncBatchNorm';
}
/** nn.groupNorm (torch.nn.GroupNorm): numChannels split into numGroups groups. */
export interface GroupNormSpec {
  type: 'groupNorm';
  numGroups: number;
  numChannels: number;
  eps?: number;
  affine?: boolean;
}
/** nn.instanceNorm2d (torch.nn.InstanceNorm2d): no affine parameters or running statistics by default. */
export interface InstanceNorm2dSpec {
  type: 'instanceNorm2d';
  numFeatures: number;
  eps?: number;
  momentum?: number;
  affine?: boolean;
  trackRunningStats?: boolean;
}
/** nn.rmsNorm (torch.nn.RMSNorm): eps unset is the input dtype's machine epsilon. */
export interface RmsNormSpec {
  type: 'rmsNorm';
  normalizedShape: number | number[];
  eps?: number;
  elementwiseAffine?: boolean;
}
/** nn.dropout2d: zeroes whole channels while training (torch.nn.Dropout2d). */
export interface Dropout2dSpec {
  type: 'dropout2d';
  p?: number;
}
/** nn.identity: its input, unchanged. */
export interface IdentitySpec {
  type: 'identity';
}
/** nn.upsample (torch.nn.Upsample): exactly one of size and scaleFactor. */
export interface UpsampleSpec {
  type: 'upsample';
  size?: Size2d;
  scaleFactor?: number;
  mode?: 'nearest' | 'bilinear';
  alignCorners?: boolean;
}
/** nn.pixelShuffle (torch.nn.PixelShuffle): [N, C·r², H, W] to [N, C, H·r, W·r]. */
export interface PixelShuffleSpec {
  type: 'pixelShuffle';
  upscaleFactor: number;
}
/** nn.unflatten (torch.nn.Unflatten): dimension dim into unflattenedSize. */
export interface UnflattenSpec {
  type: 'unflatten';
  dim: number;
  unflattenedSize: number[];
}
/** nn.leakyRelu, nn.elu, nn.softplus, nn.hardtanh with their parameters; nn.silu, nn.mish, nn.hardswish, nn.relu6, nn.hardsigmoid without. */
export interface LeakyReluSpec {
  type: 'leakyRelu';
  negativeSlope?: number;
}
export interface HardtanhSpec {
  type: 'hardtanh';
  minVal?: number;
  maxVal?: number;
}
export interface EluSpec {
  type: 'elu';
  alpha?: number;
}
export interface SoftplusSpec {
  type: 'softplus';
  beta?: number;
  threshold?: number;
}
export interface PlainActivationSpec {
  type: 'silu' | 'mish' | 'hardswish' | 'relu6' | 'hardsigmoid';
}
/** nn.prelu (torch.nn.PReLU): a learned slope, one or one per channel. */
export interface PreluSpec {
  type: 'prelu';
  numParameters?: number;
  init?: number;
}

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
export interface LSTMSpec extends RecurrentSpecFields {
  type: 'lstm';
  projSize?: number;
}
/** nn.gru (torch.nn.GRU). */
export interface GRUSpec extends RecurrentSpecFields {
  type: 'gru';
}
/** nn.rnn (torch.nn.RNN). */
export interface RNNSpec extends RecurrentSpecFields {
  type: 'rnn';
  nonlinearity?: 'tanh' | 'relu';
}

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
  | SyncBatchNormSpec
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
