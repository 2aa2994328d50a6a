// What a Trainer is given: its options, and what a subclass's configure*
// methods return.
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
import type { TrainingData } from './fit-options';

export interface TrainerOptions {
  /** The model; or override configureModels(). */
  model?: ModelLike;
  /** Needed to train and evaluate, unless the model is a TorchScript module with its own training_step. */
  loss?: LossSpec | LossName;
  /**
   * The model's optimizer; or `optimizers`, for several; or override configureOptimizers(). Without one the
   * trainer predicts, evaluates and generates, and fit refuses.
   */
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
