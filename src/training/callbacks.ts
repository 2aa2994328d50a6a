// Hooks into the training lifecycle. Epoch-level hooks may be async and are
// awaited; onProgress and onLog run while C++ keeps training and are not awaited.
import type { EpochLogs, History, StepEvaluationLogs, StepLogs } from './logs';
import type { Trainer } from './trainer';

/** The plan of a fit; counts are undefined for streamed data of unknown length. */
export interface TrainBeginInfo {
  numEpochs: number;
  batchesPerEpoch?: number;
  optimizerStepsPerEpoch?: number;
  /** Optimizer steps the learning-rate schedule is planned over. */
  totalSteps?: number;
}

export interface Callback {
  onTrainBegin?(info: TrainBeginInfo, trainer: Trainer): void | Promise<void>;
  onEpochBegin?(epoch: number, trainer: Trainer): void | Promise<void>;
  /** Every report from the running epoch (at least every `logEvery` steps, and a few times a second). */
  onProgress?(logs: StepLogs, trainer: Trainer): void;
  /** Every `logEvery` steps and at the end of each epoch. */
  onLog?(logs: StepLogs, trainer: Trainer): void;
  /** After an evaluation every evalEvery steps (mid-epoch; epoch-end ones come with onEpochEnd). */
  postValidation?(logs: StepEvaluationLogs, trainer: Trainer): void | Promise<void>;
  onEpochEnd?(epoch: number, logs: EpochLogs, trainer: Trainer): void | Promise<void>;
  onTrainEnd?(history: History, trainer: Trainer): void | Promise<void>;
  /** fit failed with `error` (awaited before fit rejects with it). */
  onException?(error: unknown, trainer: Trainer): void | Promise<void>;
}
