// What training reports: periodic step reports, one entry per epoch, the history.
import type { EvalResult, StepReport } from '../native';
import type { MetricLogs, ValMetricLogs } from './metrics';

/** A report from inside an epoch: every `logEvery` steps (isLogStep) and for progress display. */
export type StepLogs = StepReport;

/** Loss and metrics over a dataset (accuracy always for class-index losses, others from config.metrics). */
export type EvalLogs = EvalResult & MetricLogs;

/** One epoch's entry in the history: training figures, metrics, and val* metrics with evalData. */
export type EpochLogs = EpochSummary & MetricLogs & ValMetricLogs;

/** The training figures of an epoch. */
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

/** An evaluation during fit: at an epoch's end, or every config.evalEvery steps. */
export type ValidationLogs = { epoch: number; globalStep: number; valLoss: number } & ValMetricLogs;

/** A running evaluation's progress. */
export interface EvalProgress {
  /** Batches done, of `batches` (undefined for streams of unknown length). */
  batch: number;
  batches?: number;
  samples: number;
  elapsedSeconds: number;
}

/** The best value of config.metricForBestModel (default valLoss with evalData, else loss) over the epochs. */
export interface BestMetric {
  metric: string;
  value: number;
  epoch: number;
  globalStep: number;
  /** Its checkpoint folder, when one was saved (config.outputDir). */
  checkpoint?: string;
}

/** What fit resolves with. */
export interface History {
  epochs: EpochLogs[];
  /** Evaluations every evalEvery optimizer steps (empty with evalEvery 'epoch'). */
  evaluations: ValidationLogs[];
  /** True when training ended early (shouldStop, a signal, early stopping, maxTime). */
  stopped: boolean;
  /**
   * Why training ended before its epochs were done: 'maxSteps: 100 optimizer steps reached',
   * "fit's signal was aborted", 'SIGTERM received', an EarlyStopping or Timer message, trainer.stop's reason.
   */
  stopReason?: string;
  best?: BestMetric;
  /** Seconds of training, over all the runs a resumed fit continued. */
  wallTimeSeconds: number;
  /** Training samples per second of epoch time, over this fit. */
  samplesPerSecond: number;
}
