// What a run's latest checkpoint tells the report beyond the logs: the config,
// the throughput, the best metric and that epoch's confusion matrix and
// per-class metrics (kept in the history when config.metrics names them).
import { latestCheckpoint, readTrainerState } from '../training/checkpoints';
import type { BestMetric, EpochLogs } from '../training/logs';
import type { ClassificationReport } from '../training/metrics';

export interface RunSummary {
  checkpoint: string;
  config: Record<string, unknown>;
  globalStep: number;
  wallTimeSeconds: number;
  /** Training samples per second of epoch time, over the epochs in the history (resumed runs' too). */
  samplesPerSecond: number;
  best?: BestMetric;
  /** The epoch the confusion matrix and per-class metrics are of: the best one, else the last. */
  epoch?: number;
  confusionMatrix?: number[][];
  classificationReport?: ClassificationReport;
}

/** The evaluation's matrix and report when the epoch has one, else those of the training data's metrics. */
function classMetrics(logs: EpochLogs): Pick<RunSummary, 'confusionMatrix' | 'classificationReport'> {
  return {
    confusionMatrix: logs.valConfusionMatrix ?? logs.confusionMatrix,
    classificationReport: logs.valClassificationReport ?? logs.classificationReport,
  };
}

const sum = (epochs: EpochLogs[], field: 'samples' | 'seconds') =>
  epochs.reduce((total, logs) => total + logs[field], 0);

/** The summary of `outputDir`'s latest checkpoint; undefined when it has none. */
export function readRunSummary(outputDir: string): RunSummary | undefined {
  const checkpoint = latestCheckpoint(outputDir);
  if (checkpoint === undefined) return undefined;
  const state = readTrainerState(checkpoint);
  const { history } = state;
  const best = history.best;
  const epochLogs =
    history.epochs.find((logs) => best !== undefined && logs.epoch === best.epoch) ?? history.epochs.at(-1);
  return {
    checkpoint,
    config: state.config,
    globalStep: state.globalStep,
    wallTimeSeconds: state.wallTimeSeconds,
    samplesPerSecond: sum(history.epochs, 'samples') / Math.max(sum(history.epochs, 'seconds'), 1e-9),
    best,
    epoch: epochLogs?.epoch,
    ...(epochLogs === undefined ? {} : classMetrics(epochLogs)),
  };
}
