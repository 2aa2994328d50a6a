// What a Trainer is given: its options, what a subclass's configure* methods
// return, and fit's options.
import type { Dataset } from '../data/dataset';
import type { StreamingDataset } from '../data/streaming-dataset';
import type { Logger } from '../logging/logger';
import type { ModelLike } from '../nn/model-spec';
import type { LoraConfig } from './lora';
import type { Callback } from './callbacks';
import type { TrainerConfig } from './config';
import type {
  LossName,
  LossSpec,
  NamedOptimizer,
  OptimizerName,
  OptimizerSpec,
  SchedulerName,
  SchedulerSpec,
} from './objectives';
import { optionKeys } from '../options/option-keys';

export interface TrainerOptions {
  /** The model; or override configureModels(). */
  model?: ModelLike;
  /** Required unless the model is a TorchScript module with its own training_step. */
  loss?: LossSpec | LossName;
  /** The model's optimizer; or `optimizers`, for several; or override configureOptimizers(). */
  optimizer?: OptimizerSpec | OptimizerName;
  /** Several optimizers, each on its parameters and its loss from the model's training_step. */
  optimizers?: NamedOptimizer[];
  /** Default: constant learning rate (applied to every optimizer). */
  lrScheduler?: SchedulerSpec | SchedulerName;
  config?: Partial<TrainerConfig>;
  /**
   * LoRA adapters (PEFT's LoraConfig) on the targeted linear layers; every other parameter is frozen.
   * saveAdapter/loadAdapter keep them alone in PEFT's layout; mergeAdapter folds them in for export.
   */
  lora?: LoraConfig;
  /** Callbacks (objects with some hook methods), or one, TensorFlow.js-style. */
  callbacks?: Callback | Callback[];
  /** Loggers of your own (a W&B or Neptune client), fed alongside config.loggers. */
  loggers?: Logger[];
}

/** What configureModels() returns: the model, with its loss unless it has a training_step. */
export interface ModelConfiguration {
  model: ModelLike;
  loss?: LossSpec | LossName;
}

/** What configureOptimizers() returns: `optimizer` or `optimizers`, and a schedule. */
export interface OptimizerConfiguration {
  optimizer?: OptimizerSpec | OptimizerName;
  optimizers?: NamedOptimizer[];
  lrScheduler?: SchedulerSpec | SchedulerName;
}

/** What configureDataloaders() returns: fit()'s data when it is called without any. */
export interface DataloaderConfiguration {
  train?: TrainingData;
  eval?: TrainingData;
}

/** Training or evaluation data: a dataset held in C++, or batches streamed from JavaScript. */
export type TrainingData = Dataset | StreamingDataset;

export interface FitOptions {
  /** Evaluated after every epoch (and every evalEvery steps); its loss and metrics appear as valLoss, valAccuracy... */
  evalData?: TrainingData;
  /** Overrides config.numEpochs for this call. */
  numEpochs?: number;
  /** Aborting it stops training at the next step boundary (as shouldStop); fit resolves with the history so far. */
  signal?: AbortSignal;
  /**
   * After an abort (signal, SIGINT/SIGTERM), how long a callback's pending promise may still hold fit;
   * past it fit stops waiting and rejects with ERR_FIREBRAND_CALLBACK_ABANDONED. Default 5000.
   */
  abortGraceMs?: number;
}

export const FIT_OPTION_KEYS = optionKeys<FitOptions>()(['evalData', 'numEpochs', 'signal', 'abortGraceMs']);

export interface EvaluateOptions {
  /** Samples per forward. Default config.evalBatchSize. */
  batchSize?: number;
}

export const EVALUATE_OPTION_KEYS = optionKeys<EvaluateOptions>()(['batchSize']);
