// The compiled addon (native/binding) and the types of what it exports.
// Everything here is internal: the public API wraps it in src/.
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

import { type KernelSetting, warnOfUnknownKernelSettings } from './kernel-settings';
import { LoadedBinary, loadNativeBinding } from './native-loader';
import type {
  FitPlan,
  NativeEngineSpec,
  NativeEpochSegment,
  NativeFitOptions,
  NativeLoaderRequest,
} from './native-specs';
import type { OnnxGraph } from './onnx-graph';

export type NumericArray =
  Float32Array | Float64Array | Int32Array | BigInt64Array | Int16Array | Int8Array | Uint8Array;

/** A tensor copied out of libtorch: flat data in row-major order and its shape. */
export interface TensorData<Data extends NumericArray = Float32Array> {
  data: Data;
  shape: number[];
}

/** How Dataset.fromTokens cuts token ids into next-token windows. */
export interface TokenWindowOptions {
  /** Tokens per window (the model's context). */
  contextLength: number;
  /** Tokens between the starts of two windows. Default contextLength (windows side by side). */
  stride?: number;
  /** Several documents, packed: a token put between two documents (an end-of-text token). Default none. */
  separator?: number;
  /** Several documents: true packs them into one stream (windows cross documents); false windows each alone. Default true. */
  packDocuments?: boolean;
  /** Unpacked documents: the input token filling a document's short last window. Default 0. */
  padToken?: number;
  /** Unpacked documents: the target filling it, which the loss skips (its ignoreIndex). Default -100. */
  ignoreIndex?: number;
}

/** Dataset.fromTokenFile: the windows of fromTokens, and how the file stores each id. */
export interface TokenFileOptions extends TokenWindowOptions {
  /** Each id as written: numpy's tofile of a uint16 array (nanoGPT's train.bin), int32 or int64. Default 'uint16'. */
  dtype?: 'uint16' | 'int32' | 'int64';
}

/**
 * How generate samples: each token from the model's logits at the last position. A Hugging Face
 * checkpoint's generation_config.json gives the defaults, as transformers' generate takes them.
 */
export interface GenerateOptions {
  /** Tokens to generate at most. Required unless the checkpoint's generation config has max_new_tokens. */
  maxNewTokens?: number;
  /** Logits are divided by it: below 1 sharpens, above 1 flattens. Default 1. */
  temperature?: number;
  /** Sample among the k most likely tokens only. Default: all. */
  topK?: number;
  /** Sample among the most likely tokens whose probabilities reach topP (nucleus sampling). Default 1. */
  topP?: number;
  /**
   * Divides a positive logit of each token the sequence already holds (prompt included) by it and
   * multiplies a negative one (transformers' repetition_penalty), before greedy or sampled choice. Default 1.
   */
  repetitionPenalty?: number;
  /**
   * No n-gram of this size occurs twice in a sequence (prompt included): a token that would complete one
   * already there is blocked (transformers' no_repeat_ngram_size). Default 0: off.
   */
  noRepeatNgramSize?: number;
  /**
   * Sample only among tokens at least minP times as likely as the most likely one, after temperature,
   * topK and topP (transformers' min_p). Default: off.
   */
  minP?: number;
  /**
   * Take the most likely token every time (no sampling). Default false; a checkpoint's: true unless its
   * do_sample. temperature, topK, topP or minP given without greedy sample.
   */
  greedy?: boolean;
  /** Seeds the sampling: the same seed gives the same tokens. Default: a fresh seed per call. */
  seed?: number;
  /** Generation ends after any of these tokens (it is yielded). */
  stopTokens?: number[];
  /** The model sees at most this many last tokens (its position table's size). Default: all of them. */
  contextLength?: number;
  /**
   * A key/value cache: the model runs on the prompt once, then on each new token alone; causal
   * attention keeps its keys and values, a unidirectional recurrent layer its state. Default: used
   * when the model can (written as TypeScript modules, reading earlier positions only through those;
   * checked against a full forward at the first cached token), else full forwards. true: an error
   * says why it cannot. false: a full forward of the context for every token.
   */
  kvCache?: boolean;
}

/**
 * One step of a batch's generation: each prompt's token, null for a prompt that has ended, and with
 * logprobs each token's log-probability under the model's raw logits (log_softmax before any processing).
 */
export interface GenerationStep {
  tokens: (number | null)[];
  logprobs?: (number | null)[];
}

/** A running generation, held by JavaScript between tokens. */
export type GenerationHandle = { readonly generation: unique symbol };

/** What predict returns: one tensor, or what a module's forward returned: an array or an object of tensors. */
export type Prediction = TensorData | TensorData[] | { [name: string]: TensorData };

/** Tensors by field name ('input', 'target', 'input_ids'), each samples first: a dataset's columns, a batch, a model's inputs. */
export type TensorFields = Record<string, TensorData<NumericArray>>;

export type OptionFields = Record<string, number | boolean | string | number[] | undefined>;

/** exportOnnx's options as the native side takes them, every default resolved. */
export interface NativeOnnxOptions {
  opset: number;
  dynamicAxes: Record<string, Record<number, string>>;
  /** The saved image transforms folded in (resolved ImageTransformSpecs): the input is then raw uint8 images. */
  imageTransforms?: (OptionFields & { name: string })[];
}

export interface StepReport {
  epoch: number;
  step: number;
  /** Undefined for streamed data, whose length is not known. */
  stepsInEpoch?: number;
  globalStep: number;
  loss: number;
  learningRate: number;
  elapsedSeconds: number;
  /** Global gradient L2 norm before clipping at the latest optimizer step (when maxGradNorm is set). */
  gradNorm?: number;
  /** The GradScaler's loss scale after the latest step, when loss scaling is on. */
  gradScale?: number;
  /** Optimizer steps dropped this epoch: non-finite loss (nonFiniteLoss: 'skip') or overflowing scaled gradients. */
  skippedSteps: number;
  /** Every optimizer's groups' learning rates for the next step, in order. */
  learningRates: number[];
  isLogStep: boolean;
}

/** What the C++ loop hands a per-batch hook. */
export interface NativeBatchEvent {
  hook: 'preTrainBatch' | 'postTrainBatch' | 'preValBatch' | 'postValBatch';
  epoch: number;
  batch: number;
  size: number;
  globalStep: number;
  /** After a batch only. */
  loss?: number;
}

/** Called on the JS thread while the C++ loop waits; must call done(ok) once. */
export type NativeBatchHook = (event: NativeBatchEvent, done: (ok: boolean) => void) => void;

export interface NativeEvalReport {
  batch: number;
  batches?: number;
  samples: number;
  elapsedSeconds: number;
}

export interface EpochResult {
  loss: number;
  steps: number;
  optimizerSteps: number;
  skippedSteps: number;
  samples: number;
  seconds: number;
  learningRate: number;
  stopped: boolean;
  /** The batch a paused or stopped epoch continues from. */
  nextBatch: number;
}

export interface EvalResult {
  loss: number;
  samples: number;
  seconds: number;
}

// Results also carry the metrics config.metrics asked for, as optional fields that training/metrics.ts
// types (MetricLogs): this file, the lowest of src/, leaves their names to it.
export type NativeEpochResult = EpochResult;
export type NativeEvalResult = EvalResult;

/** How the native binary was built. */
export interface BuildInfo {
  /** The libtorch headers it was compiled against. */
  torchVersion: string;
  /** How CMake found libtorch: 'the system libtorch', 'LIBTORCH=...', 'the torch package of python3', ... */
  libtorchSource: string;
  /** The TorchConfig.cmake folder used. */
  torchDir: string;
  /** libtorch with CUDA. */
  cuda: boolean;
  /** c10d backends compiled in. */
  gloo: boolean;
  nccl: boolean;
}

export interface RuntimeInfo {
  torchVersion: string;
  cudaAvailable: boolean;
  cudnnAvailable: boolean;
  cudaDeviceCount: number;
  /** Intra-op threads training uses; with threadsAdaptive, at most this many, chosen while training. */
  numThreads: number;
  threadsAdaptive: boolean;
  /** The BLAS libtorch calls; coreType: the kernels OpenBLAS chose ("SkylakeX", "Haswell"), empty for another BLAS. */
  blas: { vendor: string; library: string; coreType: string };
  build: BuildInfo;
  /** Optimizers whose fused one-pass step (option `fused`, default true) runs for float32 CPU parameters in this process. */
  fusedOptimizers: string[];
  /**
   * Whether frozen float32 linear layers (LoRA's base layers, `freeze`d ones) compute their products in training,
   * and the float32 linear layers of a `predict` lowered for inference that no packed matmul takes (onednnMatmul),
   * through oneDNN's sgemm here: where the libtorch links a oneDNN that exports it, unless FIREBRAND_ONEDNN_SGEMM=0.
   */
  onednnSgemm: boolean;
  /** Products oneDNN's sgemm has computed for those linear layers in this process. */
  onednnSgemmProducts: number;
  /**
   * Whether `predict`'s lowered float32 convolutions run as oneDNN primitives of firebrand's own (made once per
   * input size, the weight packed once): where the libtorch links oneDNN 3, unless FIREBRAND_ONEDNN_CONVOLUTION=0;
   * elsewhere libtorch's prepacked convolution runs them.
   */
  onednnConvolution: boolean;
  /**
   * Whether `predict`'s lowered float32 linear layers of a traced model run as oneDNN 3 matmuls of firebrand's own
   * (made once per row count, the weight packed once, a GELU, SiLU or ReLU alone after it as its post-op): where
   * the libtorch links oneDNN 3, unless FIREBRAND_ONEDNN_MATMUL=0; elsewhere oneDNN's sgemm runs them. A weight
   * over 8 MB is not packed: its product, and a frozen layer's output in training, run oneDNN's matmul on the
   * weight in place (onednnPlainMatmulProducts).
   */
  onednnMatmul: boolean;
  /** Products those matmuls have computed in this process. */
  onednnMatmulProducts: number;
  /**
   * Outputs of frozen float32 linear layers computed in this process by a oneDNN 3 matmul that reads the weight
   * where it lies (no packed copy; products of at least 64³ multiply-adds, where onednnMatmul): faster than
   * the sgemm on those products, which then computes their input gradients only.
   */
  onednnPlainMatmulProducts: number;
  /**
   * Module calls a native decode kernel has run in this process: generation's one call per decoder layer
   * for one new position (Llama, Qwen2, Mistral). FIREBRAND_DECODE_KERNELS=0 runs their ops instead.
   */
  decodeKernelSteps: number;
  /**
   * Times, in this process, a trainer's or model's thread ended its kernel threads (its OpenMP pool) because
   * another one's task started: two pools beside each other make every fork-join sleep and wake.
   */
  kernelThreadHandOffs: number;
}

export interface NativeDataset {
  readonly size: number;
  readonly fieldShapes: Record<string, number[]>;
  slice(start: number, end: number): NativeDataset;
  fields(): Record<string, TensorData<NumericArray>>;
  batchOrder(options: NativeLoaderRequest): number[][];
  /** [train, validation] parts of the given fractions (summing to 1), as random_split. */
  split(train: number, validation: number, seed: number): [NativeDataset, NativeDataset];
  /** The samples `indices`, in that order (copies of held fields). */
  select(indices: number[]): NativeDataset;
  /** The same samples with these fields in place of their own (or beside them). */
  withFields(fields: Record<string, TensorData<NumericArray>>): NativeDataset;
  withTransforms(transforms: (OptionFields & { name: string })[]): NativeDataset;
  /** weights undefined: 'balanced' (1 / each sample's class count). */
  withSampleWeights(weights: number[] | undefined, numSamples: number, replacement: boolean): NativeDataset;
  loader(options: NativeLoaderRequest): NativeLoader;
}

export interface NativeLoader {
  next(): Promise<Record<string, TensorData<NumericArray>> | undefined>;
  drain(): Promise<{ batches: number; samples: number; seconds: number }>;
  close(): void;
  readonly batchCount: number;
}

export interface NativeBatchQueue {
  /** Queues a batch (copied); false when the queue is full or closed. */
  push(batch: Record<string, TensorData<NumericArray>>): boolean;
  /** Resolves true when there is room again, false when the consumer has closed the queue. */
  waitForRoom(): Promise<boolean>;
  finish(): void;
  fail(message: string): void;
  readonly closed: boolean;
}

/** A model's tensors by PyTorch state-dict name, in state-dict order (no values). */
export interface ModelDescription {
  parameters: { name: string; shape: number[]; dtype: string; requiresGrad: boolean }[];
  buffers: { name: string; shape: number[]; dtype: string }[];
  /** Names under which the model holds a tensor a second time (weight tying), with the name it has above. */
  tied: { name: string; source: string }[];
}

export interface NativeModel {
  /** shape undefined: `inputs` holds the named fields of a model that takes several. */
  predict(
    inputs: NumericArray | Record<string, TensorData<NumericArray>>,
    shape: number[] | undefined,
    batchSize: number,
    optimizeForInference: boolean,
  ): Promise<Prediction>;
  startGeneration(prompts: NumericArray[], options: GenerateOptions & { logprobs?: boolean }): GenerationHandle;
  generateNext(generation: GenerationHandle): Promise<GenerationStep | null>;
  loadWeights(path: string, strict: boolean): Promise<{ missing: string[]; unexpected: string[] }>;
  exportOnnx(example: Record<string, TensorData<NumericArray>>, options: NativeOnnxOptions): Promise<OnnxGraph>;
  exportTorchScript(path: string): Promise<void>;
  stateDict(): Promise<Record<string, TensorData<NumericArray>>>;
  /** The model's tensors as they are now (a trainer's: frozen ones say requiresGrad false). */
  readonly description: ModelDescription;
  readonly parameterCount: number;
  readonly device: string;
}

export interface NativeEngine {
  /** data: a dataset, or a stream's batches per epoch (undefined when unknown). */
  beginFit(
    data: NativeDataset | number | undefined,
    options: NativeFitOptions,
    numEpochs: number,
    maxSteps?: number,
  ): FitPlan;
  onEvalMetric(value: number): void;
  saveState(folder: string): Promise<void>;
  loadState(folder: string): Promise<void>;
  saveWeights(path: string): Promise<void>;
  /** `renames`: a weight's new name, or null to leave it out; names not listed stay. */
  initWeightsFrom(
    path: string,
    strict: boolean,
    renames?: Record<string, string | null>,
  ): Promise<{ missing: string[]; unexpected: string[] }>;
  readonly schedulerMonitor: string | undefined;
  trainEpoch(
    data: NativeDataset | NativeBatchQueue,
    segment: NativeEpochSegment,
    onReport: (report: StepReport) => void,
    onBatch?: NativeBatchHook,
  ): Promise<NativeEpochResult>;
  evaluate(
    data: NativeDataset | NativeBatchQueue,
    batchSize: number,
    options?: {
      epoch?: number;
      onReport?: (report: NativeEvalReport) => void;
      onBatch?: NativeBatchHook;
      /** false: all the data on this rank alone, nothing summed over the ranks. Default true. */
      distributed?: boolean;
    },
  ): Promise<NativeEvalResult>;
  /** Base learning rate of every optimizer (or the named one): now when idle, else from the next step. */
  setLearningRate(lr: number, optimizer?: string): void;
  /** Every optimizer's groups' current learning rates (throws while an operation runs). */
  readonly learningRates: number[];
  /** Names of learningRates' entries: 'adamw', 'adamw/pg1', 'generator'. */
  readonly learningRateNames: string[];
  /** The trainer's model, on the trainer's thread: its work runs between two steps during a fit. */
  readonly model: NativeModel;
  /** LoRA adapters: written or read under PEFT's names (.safetensors), or merged into the weights. */
  /** Resolves with the modules saved whole beside the adapters (PEFT's modules_to_save). */
  saveAdapter(path: string): Promise<string[]>;
  loadAdapter(path: string): Promise<void>;
  mergeAdapters(): Promise<void>;
  /** fromPretrained's quantize: 'int8' once the weights are loaded: the paths of the layers made int8. */
  quantizeInt8(roots: string[]): Promise<string[]>;
  /** The model takes config.ema's averaged weights (the end of a fit). */
  copyAverageToModel(): Promise<void>;
  /** Fine-tuning, between two steps during a fit: the parameters frozen or unfrozen, by name. */
  freeze(patterns: string[]): Promise<string[]>;
  unfreeze(patterns: string[], lr?: number): Promise<string[]>;
  requestStop(): void;
  clearStop(): void;
  readonly globalStep: number;
  readonly device: string;
  /** Joins the data-parallel run (once every rank has); rank 0's weights replace this rank's. */
  distribute(options: {
    rank: number;
    worldSize: number;
    masterAddr: string;
    masterPort: number;
    agentStorePrefix: string;
    backend: string;
    timeout: number;
    bucketCapMb: number;
    broadcastBuffers: boolean;
    zeroRedundancyOptimizer: boolean;
  }): Promise<{
    rank: number;
    worldSize: number;
    backend: string;
    buckets: number;
  }>;
  /** Each value summed over the ranks (a collective: every rank calls it at the same point). */
  sumOverRanks(values: number[], what: string): Promise<number[]>;
  /** Tells the other ranks, through the rendezvous store, that this one failed (the first post stays). */
  postFailure(message: string): Promise<void>;
  /** With the optimizer state sharded: every rank's share sent to rank 0, before it saves (a collective). */
  gatherOptimizerState(): Promise<void>;
  /** The bytes of optimizer state (moments, momentum buffers) this process holds. */
  optimizerStateBytes(): Promise<number>;
}

export interface NativeBinding {
  NativeDataset: {
    fromIdx(inputsPath: string, targetsPath: string, options?: OptionFields): Promise<NativeDataset>;
    fromFields(fields: Record<string, TensorData<NumericArray>>): NativeDataset;
    fromTokens(documents: NumericArray[], options: TokenWindowOptions): NativeDataset;
    fromTokenFile(path: string, options: TokenFileOptions): Promise<NativeDataset>;
    allocate(fields: Record<string, { dtype: string; shape: number[] }>): {
      dataset: NativeDataset;
      arrays: Record<string, NumericArray>;
    };
    fromNpy(inputsPath: string, targetsPath: string): Promise<NativeDataset>;
    fromNpz(path: string, fields?: Record<string, string>): Promise<NativeDataset>;
    fromSafetensors(path: string, fields?: Record<string, string>): Promise<NativeDataset>;
  };
  NativeEngine: new (spec: NativeEngineSpec) => NativeEngine;
  NativeModel: {
    new (model: object, device: string): NativeModel;
    /** Builds the model aside (the seeded random numbers untouched) to name its tensors. */
    describe(model: object): ModelDescription;
    /** describe(), and each graph node's output shape for zeros of `inputShape` (null for non-tensors), from one build aside in eval mode. */
    summary(model: object, inputShape: number[], dtype: string): ModelDescription & { nodeShapes: (number[] | null)[] };
  };
  NativeBatchQueue: new (queueDepth: number, batchesPerEpoch: number | undefined) => NativeBatchQueue;
  runtimeInfo(): RuntimeInfo;
  /** The environment variables that choose between firebrand's kernel versions, and the values each takes. */
  kernelSettings(): KernelSetting[];
  /** The names of a weights file's tensors (.safetensors or TorchScript). */
  weightNames(path: string): Promise<string[]>;
  loadSafetensors(
    path: string,
  ): Promise<{ tensors: Record<string, TensorData<NumericArray>>; metadata: Record<string, string> }>;
  saveSafetensors(
    path: string,
    tensors: Record<string, TensorData<NumericArray>>,
    metadata?: Record<string, string>,
  ): Promise<void>;
  /** A dataset whose input is decoded from `paths` (as each batch is cut) and whose other fields are held. */
  imageDataset(
    paths: string[],
    fields: Record<string, TensorData<NumericArray>>,
    options: { mode: string; onError: 'stop' | 'skip'; transforms: OptionFields[]; maxPixels: number },
  ): NativeDataset;
  withImageTransforms(dataset: NativeDataset, transforms: OptionFields[]): NativeDataset;
  /** The image file of each sample of an image dataset, in order. */
  imagePaths(dataset: NativeDataset): string[];
  /** The files an image dataset left out so far (onError 'skip'), each once. */
  skippedImages(dataset: NativeDataset): { path: string; reason: string }[];
  /** Raw pixels [N, C, H, W] ([N, H, W], [N, n]), each sample through the transforms, on libuv's pool. */
  transformImages(inputs: TensorData<NumericArray>, transforms: OptionFields[]): Promise<TensorData<NumericArray>>;
  /** A uint8 image [C, H, W] encoded as PNG (compression level 0..9) or JPEG (quality 1..100), on libuv's pool. */
  encodeImage(image: TensorData<NumericArray>, format: 'png' | 'jpeg', setting: number): Promise<Buffer>;
  /** One encoded JPEG, PNG or WebP decoded and transformed on libuv's pool; errors name `source`. */
  decodeImage(
    bytes: Uint8Array,
    mode: string,
    transforms: OptionFields[],
    seed: number,
    source: string,
    maxPixels: number,
  ): Promise<TensorData<NumericArray>>;
  /** Encoded images, each decoded and transformed as decodeImage does, stacked as [N, ...] in one call; errors name `field`[i]. */
  decodeImages(
    images: Uint8Array[],
    mode: string,
    transforms: OptionFields[],
    seed: number,
    field: string,
    maxPixels: number,
  ): Promise<TensorData<NumericArray>>;
  /** Every image transform C++ runs, and whether it draws random numbers. */
  imageTransformRows(): { name: string; random: boolean }[];
  setNumThreads(threads: number, adaptive?: boolean): void;
  /** Every op row of the graph runtime and the forms it has ('run', 'torchScript'). */
  graphOps(): { name: string; forms: string[] }[];
  /** Every built-in layer's row (the layers with parameters) and the forms it has. */
  graphLayers(): { name: string; forms: string[] }[];
  manualSeed(seed: number): void;
  useDeterministicAlgorithms(on: boolean): void;
  /** Stops and joins this environment's task threads and closes its gate (process 'exit'). */
  tearDownAtExit(): void;
}

let loaded: LoadedBinary<NativeBinding> | undefined;

/**
 * The binary this process loads, loaded on first use: importing firebrand never fails, so that
 * `firebrand doctor` can explain a binary that cannot load. Throws ERR_FIREBRAND_NATIVE_LOAD.
 */
export function nativeBinary(): LoadedBinary<NativeBinding> {
  if (loaded === undefined) {
    loaded = loadNativeBinding<NativeBinding>(path.resolve(__dirname, '..', '..'));
    warnOfUnknownKernelSettings(loaded.binding.kernelSettings());
    // process.exit() runs no environment cleanup on the main thread (a worker's exit does).
    const { binding } = loaded;
    if (isMainThread) process.once('exit', () => binding.tearDownAtExit());
  }
  return loaded;
}

/** The addon's exports; the first access loads it (nativeBinary). */
export const native: NativeBinding = new Proxy({} as NativeBinding, {
  get: (_target, key) => Reflect.get(nativeBinary().binding, key),
});
