// What training reports: periodic step reports, one entry per epoch, the history.
import type { EvalResult, StepReport } from '../native';

/** A report from inside an epoch: every `logEvery` steps (isLogStep) and for progress display. */
export type StepLogs = StepReport;

export type EvalLogs = EvalResult;

export interface EpochLogs {
  /** 0-based epoch index. */
  epoch: number;
  /** Mean training loss over the epoch's samples. */
  loss: number;
  /** Training accuracy (classification losses only). */
  accuracy?: number;
  valLoss?: number;
  valAccuracy?: number;
  learningRate: number;
  /** Micro-batches run. */
  steps: number;
  /** Optimizer steps applied (steps / gradientAccumulationSteps, rounded up, less skipped ones). */
  optimizerSteps: number;
  /** Optimizer steps dropped for a non-finite loss (nonFiniteLoss: 'skip'). */
  skippedSteps: number;
  samples: number;
  globalStep: number;
  seconds: number;
}

export interface History {
  epochs: EpochLogs[];
  /** True when training ended early (stopTraining, or a stopped epoch). */
  stopped: boolean;
}
