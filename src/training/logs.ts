// What training reports: periodic step reports, one entry per epoch, the history.
import type { EvalResult, StepReport } from '../native';
import type { MetricLogs, ValMetricLogs } from './metrics';

/** A report from inside an epoch: every `logEvery` steps (isLogStep) and for progress display. */
export type StepLogs = StepReport;

/** Loss and metrics over a dataset (accuracy always for class-index losses, others from config.metrics). */
export type EvalLogs = EvalResult & MetricLogs;

export type EpochLogs = EpochSummary & MetricLogs & ValMetricLogs;

export interface EpochSummary {
  /** 0-based epoch index. */
  epoch: number;
  /** Mean training loss over the epoch's samples. */
  loss: number;
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

/** An evaluation in the middle of an epoch (config.evalEvery steps). */
export type StepEvaluationLogs = { epoch: number; globalStep: number; valLoss: number } & ValMetricLogs;

export interface History {
  epochs: EpochLogs[];
  /** Evaluations every evalEvery optimizer steps (empty with evalEvery 'epoch'). */
  evaluations: StepEvaluationLogs[];
  /** True when training ended early (stopTraining, or a stopped epoch). */
  stopped: boolean;
}
