// Hooks into the training lifecycle, with Dream Trainer's names (camelCase),
// TensorFlow.js's model.fit names, and two observers of the running C++ loop.
// Lifecycle hooks may be async and are awaited; per-batch hooks make the C++
// loop wait for them, so they cost a round trip per batch and are only
// called (and paid for) when some callback defines them.
import type { TrainerState } from './checkpoints';
import type { EpochLogs, EvalProgress, History, StepLogs, ValidationLogs } from './logs';
import type { Trainer } from './trainer';

type Hook = void | Promise<void>;

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
  preLaunch?(trainer: Trainer): Hook;
  /** Before configureModels, configureOptimizers and configureDataloaders. */
  preConfigure?(trainer: Trainer): Hook;
  postConfigure?(trainer: Trainer): Hook;
  /** Before the model, loss and optimizers are built in C++. */
  preSetup?(trainer: Trainer): Hook;
  /** Once the model is built (parameterCount and device are known). */
  postSetup?(trainer: Trainer): Hook;
  preFit?(info: TrainBeginInfo, trainer: Trainer): Hook;
  preEpoch?(epoch: number, trainer: Trainer): Hook;
  /** Before each training micro-batch; training waits for it. */
  preTrainBatch?(batch: BatchInfo, trainer: Trainer): Hook;
  /** After each training micro-batch; training waits for it. */
  postTrainBatch?(batch: BatchResult, trainer: Trainer): Hook;
  /** Before each evaluation, at epoch ends and every evalEvery steps (and in trainer.evaluate). */
  preValidation?(info: ValidationInfo, trainer: Trainer): Hook;
  preValBatch?(batch: BatchInfo, trainer: Trainer): Hook;
  postValBatch?(batch: BatchResult, trainer: Trainer): Hook;
  postValidation?(logs: ValidationLogs, trainer: Trainer): Hook;
  /** After an epoch (and its evaluation) with its logs. */
  postEpoch?(epoch: number, logs: EpochLogs, trainer: Trainer): Hook;
  postFit?(history: History, trainer: Trainer): Hook;
  /** A fit failed with `error`; awaited before fit rejects with it. */
  onException?(error: unknown, trainer: Trainer): Hook;
  /** Before a checkpoint is written: add what you need to resume to `state.callbacks`. */
  onSaveCheckpoint?(checkpoint: CheckpointInfo, trainer: Trainer): Hook;
  /** After a checkpoint was loaded to resume from. */
  onLoadCheckpoint?(checkpoint: CheckpointInfo, trainer: Trainer): Hook;

  /** Observer: every report of the running epoch (each logEvery steps, and a few times a second). Not awaited. */
  onProgress?(logs: StepLogs, trainer: Trainer): void;
  /** Observer: every logEvery optimizer steps and at each epoch's end. Not awaited. */
  onLog?(logs: StepLogs, trainer: Trainer): void;
  /** Observer: a running evaluation's progress, a few times a second. Not awaited. */
  onEvalProgress?(progress: EvalProgress, trainer: Trainer): void;

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
