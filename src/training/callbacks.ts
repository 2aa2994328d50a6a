// Hooks into the training lifecycle, with Dream Trainer's names (camelCase),
// TensorFlow.js's model.fit names, and two observers of the running C++ loop.
// Lifecycle hooks may be async and are awaited; per-batch hooks make the C++
// loop wait for them, so they cost a round trip per batch and are only
// called (and paid for) when some callback defines them.
import type { ExportOnnxOptions } from '../export/export-onnx';
import type { Model } from '../inference/model';
import type { Logger } from '../logging/logger';
import type { GenerateOptions, ModelDescription, NumericArray, TensorData } from '../native';
import type { ModelPreprocessing } from '../preprocessing/model-preprocessing';
import type { TrainerState } from './checkpoints';
import type { ResolvedConfig } from './config';
import type { EvaluateOptions, FitOptions, TrainingData } from './fit-options';
import type { EvalLogs, EpochLogs, EvalProgress, History, StepLogs, ValidationLogs } from './logs';
import type { InitWeightsOptions } from './weight-renames';

type Hook = void | Promise<void>;

/**
 * The trainer as its hooks receive it: every public member of Trainer (which implements this), declared
 * here so that callbacks, loggers and the progress bar depend on the hooks' vocabulary, not on the class
 * that builds them. Each member is documented on Trainer.
 */
export interface TrainerView {
  readonly config: ResolvedConfig;
  readonly callbacks: readonly Callback[];
  readonly loggers: readonly Logger[];
  setup(): Promise<void>;
  shouldStop: boolean;
  stopTraining: boolean;
  stop(reason: string): void;
  requestSave(): void;
  saveAdapter(folder: string): Promise<void>;
  loadAdapter(folder: string): Promise<void>;
  mergeAdapter(): Promise<void>;
  freeze(patterns: string | string[]): Promise<string[]>;
  unfreeze(patterns: string | string[], options?: { lr?: number }): Promise<string[]>;
  setLearningRate(lr: number, optimizer?: string): void;
  readonly learningRates: number[];
  readonly learningRateNames: string[];
  readonly globalRank: number;
  readonly worldSize: number;
  readonly namedParameters: ModelDescription['parameters'];
  readonly namedBuffers: ModelDescription['buffers'];
  readonly parameterCount: number;
  readonly globalStep: number;
  readonly device: string;
  fit(trainData?: TrainingData, options?: FitOptions): Promise<History>;
  evaluate(data?: TrainingData, options?: EvaluateOptions): Promise<EvalLogs>;
  save(folder: string): Promise<void>;
  /** @internal */
  writeModel(folder: string): Promise<void>;
  /** @internal */
  readModelWeights(folder: string): Promise<void>;
  readonly preprocessing: ModelPreprocessing | undefined;
  savePretrained(folder: string): Promise<void>;
  exportTorchScript(file: string): Promise<void>;
  exportOnnx(file: string, options?: ExportOnnxOptions): Promise<void>;
  initWeightsFrom(file: string, options?: InitWeightsOptions): Promise<{ missing: string[]; unexpected: string[] }>;
  stateDict(): Promise<Record<string, TensorData<NumericArray>>>;
  readonly predict: Model['predict'];
  generate(prompt: ArrayLike<number> | NumericArray, options: GenerateOptions): AsyncGenerator<number, void, undefined>;
  readonly model: Model;
}

/** The plan of a fit; counts are undefined for streamed data of unknown length. */
export interface TrainBeginInfo {
  numEpochs: number;
  batchesPerEpoch?: number;
  optimizerStepsPerEpoch?: number;
  /** Optimizer steps the learning-rate schedule is planned over. */
  totalSteps?: number;
}

/** A micro-batch, as per-batch hooks see it. */
export interface BatchInfo {
  epoch: number;
  /** 0-based within the epoch (or the evaluation). */
  batch: number;
  /** Samples in the batch. */
  size: number;
  /** Optimizer steps taken so far. */
  globalStep: number;
}

/** A micro-batch once it ran: its loss (after its optimizer step, if it ended a group). */
export interface BatchResult extends BatchInfo {
  loss: number;
}

/** Where an evaluation stands when it begins. */
export interface ValidationInfo {
  epoch: number;
  globalStep: number;
}

/** A checkpoint being written (state may be extended under `callbacks`) or just loaded. */
export interface CheckpointInfo {
  /** The checkpoint's folder (outputDir/checkpoints/step-N). */
  folder: string;
  state: TrainerState;
}

/** TensorFlow.js's logs argument: numbers by name. */
export type TfLogs = Record<string, number>;

/**
 * A callback: any object with some of these methods. Methods also defined on a Trainer
 * subclass run first, as the trainer's own hooks. Hooks are called in this order:
 * preLaunch, preConfigure, postConfigure, preSetup, postSetup (once, on the trainer's first
 * use), then per fit preFit, and per epoch preEpoch, preTrainBatch/postTrainBatch per batch,
 * preValidation, preValBatch/postValBatch, postValidation, postEpoch; then postFit.
 * onException when a fit fails; onSaveCheckpoint/onLoadCheckpoint around checkpoints.
 */
export interface Callback {
  /** Before anything: the first hook of the trainer's first fit, evaluate or predict. */
  preLaunch?(trainer: TrainerView): Hook;
  /** Before configureModels, configureOptimizers and configureDataloaders. */
  preConfigure?(trainer: TrainerView): Hook;
  postConfigure?(trainer: TrainerView): Hook;
  /** Before the model, loss and optimizers are built in C++. */
  preSetup?(trainer: TrainerView): Hook;
  /** Once the model is built (parameterCount and device are known). */
  postSetup?(trainer: TrainerView): Hook;
  preFit?(info: TrainBeginInfo, trainer: TrainerView): Hook;
  preEpoch?(epoch: number, trainer: TrainerView): Hook;
  /** Before each training micro-batch; training waits for it. */
  preTrainBatch?(batch: BatchInfo, trainer: TrainerView): Hook;
  /** After each training micro-batch; training waits for it. */
  postTrainBatch?(batch: BatchResult, trainer: TrainerView): Hook;
  /** Before each evaluation, at epoch ends and every evalEvery steps (and in trainer.evaluate). */
  preValidation?(info: ValidationInfo, trainer: TrainerView): Hook;
  preValBatch?(batch: BatchInfo, trainer: TrainerView): Hook;
  postValBatch?(batch: BatchResult, trainer: TrainerView): Hook;
  postValidation?(logs: ValidationLogs, trainer: TrainerView): Hook;
  /** After an epoch (and its evaluation) with its logs. */
  postEpoch?(epoch: number, logs: EpochLogs, trainer: TrainerView): Hook;
  postFit?(history: History, trainer: TrainerView): Hook;
  /** A fit failed with `error`; awaited before fit rejects with it. */
  onException?(error: unknown, trainer: TrainerView): Hook;
  /** Before a checkpoint is written: add what you need to resume to `state.callbacks`. */
  onSaveCheckpoint?(checkpoint: CheckpointInfo, trainer: TrainerView): Hook;
  /** After a checkpoint was loaded to resume from. */
  onLoadCheckpoint?(checkpoint: CheckpointInfo, trainer: TrainerView): Hook;

  /** Observer: every report of the running epoch (each logEvery steps, and a few times a second). Not awaited. */
  onProgress?(logs: StepLogs, trainer: TrainerView): void;
  /** Observer: every logEvery optimizer steps and at each epoch's end. Not awaited. */
  onLog?(logs: StepLogs, trainer: TrainerView): void;
  /** Observer: a running evaluation's progress, a few times a second. Not awaited. */
  onEvalProgress?(progress: EvalProgress, trainer: TrainerView): void;

  /** TensorFlow.js: as preFit. */
  onTrainBegin?(logs?: TfLogs): Hook;
  /** TensorFlow.js: as postFit, with the last epoch's logs. */
  onTrainEnd?(logs?: TfLogs): Hook;
  onEpochBegin?(epoch: number, logs?: TfLogs): Hook;
  onEpochEnd?(epoch: number, logs?: TfLogs): Hook;
  /** TensorFlow.js: as preTrainBatch; logs hold batch and size. */
  onBatchBegin?(batch: number, logs?: TfLogs): Hook;
  /** TensorFlow.js: as postTrainBatch; logs hold batch, size and loss. */
  onBatchEnd?(batch: number, logs?: TfLogs): Hook;
}

/** Hooks that make the C++ training loop wait for JavaScript at every batch. */
export const TRAIN_BATCH_HOOKS = ['preTrainBatch', 'postTrainBatch', 'onBatchBegin', 'onBatchEnd'] as const;
export const VAL_BATCH_HOOKS = ['preValBatch', 'postValBatch'] as const;
