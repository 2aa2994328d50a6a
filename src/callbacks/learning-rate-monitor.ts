// Logs every optimizer parameter group's learning rate to the trainer's
// loggers (Lightning's LearningRateMonitor): 'lr-adamw', or 'lr-adamw/pg1'
// with several groups, or 'lr-generator' with several optimizers.
import type { Callback, TrainerView } from '../training/callbacks';
import type { StepLogs } from '../training/logs';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';

export interface LearningRateMonitorOptions {
  /** At every log step ('step', default) or at each epoch's end ('epoch'). */
  loggingInterval?: 'step' | 'epoch';
}

const OPTION_KEYS = optionKeys<LearningRateMonitorOptions>()(['loggingInterval']);

export class LearningRateMonitor implements Callback {
  /** Every logged rate by metric name, in order. */
  readonly lrs: Record<string, number[]> = {};
  private readonly interval: 'step' | 'epoch';

  constructor(options: LearningRateMonitorOptions = {}) {
    refuseUnknownKeys(options, OPTION_KEYS, 'LearningRateMonitor options');
    this.interval = options.loggingInterval ?? 'step';
  }

  onLog(logs: StepLogs, trainer: TrainerView): void {
    if (this.interval === 'step') this.record(logs.learningRates, logs.globalStep, trainer);
  }

  postEpoch(_epoch: number, _logs: unknown, trainer: TrainerView): void {
    if (this.interval === 'epoch') this.record(trainer.learningRates, trainer.globalStep, trainer);
  }

  private record(rates: number[], step: number, trainer: TrainerView): void {
    // Read each time: unfreezing adds parameter groups mid-fit.
    const names = trainer.learningRateNames.map((name) => `lr-${name}`);
    const metrics: Record<string, number> = {};
    rates.forEach((rate, index) => {
      const name = names[index];
      metrics[name] = rate;
      (this.lrs[name] ??= []).push(rate);
    });
    for (const logger of trainer.loggers) logger.logMetrics(metrics, step);
  }
}
