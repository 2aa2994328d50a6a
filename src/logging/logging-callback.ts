// Feeds the loggers from the training lifecycle: hyper-parameters once, step
// reports (loss, learning rate, grad-norm, loss scale, throughput) at log
// steps, epoch and evaluation metrics, and closes them when fit ends.
import type { Callback, TrainerView } from '../training/callbacks';
import type { EpochLogs, StepLogs, ValidationLogs } from '../training/logs';
import { BOOKKEEPING_FIELDS, isValidationField } from '../training/metrics';
import type { Logger, ScalarMetrics } from './logger';

/** 'valAccuracy' -> 'val/accuracy', 'loss' -> 'train/loss'; numbers only. */
function scalars(logs: object, trainPrefix: string): ScalarMetrics {
  const metrics: ScalarMetrics = {};
  for (const [name, value] of Object.entries(logs)) {
    if (typeof value !== 'number' || BOOKKEEPING_FIELDS.has(name)) continue;
    const validation = isValidationField(name);
    const bare = validation ? name[3].toLowerCase() + name.slice(4) : name;
    metrics[`${validation ? 'val' : trainPrefix}/${bare}`] = value;
  }
  return metrics;
}

export class LoggingCallback implements Callback {
  constructor(private readonly loggers: readonly Logger[]) {}

  preFit(_info: unknown, trainer: TrainerView): void {
    for (const logger of this.loggers) logger.logHyperparameters?.({ ...trainer.config });
  }

  onLog(logs: StepLogs): void {
    const metrics: ScalarMetrics = {
      'train/loss': logs.loss,
      'train/learningRate': logs.learningRate,
      'train/stepsPerSecond': logs.step / Math.max(logs.elapsedSeconds, 1e-9),
    };
    if (logs.gradNorm !== undefined) metrics['train/gradNorm'] = logs.gradNorm;
    if (logs.gradScale !== undefined) metrics['train/gradScale'] = logs.gradScale;
    this.emit(metrics, logs.globalStep);
  }

  postValidation(logs: ValidationLogs): void {
    this.emit(scalars(logs, 'val'), logs.globalStep);
  }

  postEpoch(_epoch: number, logs: EpochLogs): void {
    // Its evaluation's metrics went out with postValidation.
    const trained = Object.fromEntries(Object.entries(logs).filter(([name]) => !isValidationField(name)));
    this.emit(
      { ...scalars(trained, 'epoch'), 'epoch/samplesPerSecond': logs.samples / Math.max(logs.seconds, 1e-9) },
      logs.globalStep,
    );
  }

  async postFit(): Promise<void> {
    await this.close();
  }

  /** A failed fit's logs are complete up to the failure. */
  async onException(): Promise<void> {
    await this.close();
  }

  private async close(): Promise<void> {
    for (const logger of this.loggers) await logger.close?.();
  }

  private emit(metrics: ScalarMetrics, step: number): void {
    for (const logger of this.loggers) logger.logMetrics(metrics, step);
  }
}
