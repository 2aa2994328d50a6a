// Stops training once a time budget is spent (Lightning's Timer), counted
// across resumed runs, and tells how long training and validation took.
// config.maxTime adds one.
import { firebrandError } from '../errors';
import type { Callback, CheckpointInfo, TrainerView } from '../training/callbacks';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';

export type TimerDuration = number | string | { days?: number; hours?: number; minutes?: number; seconds?: number };

export interface TimerOptions {
  /** Seconds, 'DD:HH:MM:SS', or { days, hours, minutes, seconds }. */
  duration: TimerDuration;
  /** Check at every progress report ('step', default: stops within a fraction of a second) or at epoch ends. */
  interval?: 'step' | 'epoch';
}

const OPTION_KEYS = optionKeys<TimerOptions>()(['duration', 'interval']);

export type TimerStage = 'train' | 'validate';

const STATE_KEY = 'Timer';

/** A duration in seconds, or an error naming what was given. */
export function durationSeconds(duration: TimerDuration): number {
  let seconds: number;
  if (typeof duration === 'number') {
    seconds = duration;
  } else if (typeof duration === 'string') {
    const parts = /^(\d+):(\d{1,2}):(\d{1,2}):(\d{1,2})$/.exec(duration);
    seconds =
      parts === null
        ? NaN
        : ((Number(parts[1]) * 24 + Number(parts[2])) * 60 + Number(parts[3])) * 60 + Number(parts[4]);
  } else {
    const { days = 0, hours = 0, minutes = 0, seconds: rest = 0 } = duration;
    seconds = ((days * 24 + hours) * 60 + minutes) * 60 + rest;
  }
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `Timer: duration must be seconds > 0, 'DD:HH:MM:SS' or { days, hours, minutes, seconds }, got ${JSON.stringify(duration)}`,
    );
  }
  return seconds;
}

export class Timer implements Callback {
  /** The budget, in seconds. */
  readonly duration: number;
  private readonly interval: 'step' | 'epoch';
  private readonly spent: Record<TimerStage, number> = { train: 0, validate: 0 };
  private readonly startedAt: Partial<Record<TimerStage, number>> = {};
  /** The running fit resumed a checkpoint, whose spent time counts. */
  private resumed = false;

  constructor(options: TimerOptions) {
    refuseUnknownKeys(options, OPTION_KEYS, 'Timer options');
    this.duration = durationSeconds(options.duration);
    this.interval = options.interval ?? 'step';
  }

  /** Seconds spent in `stage` (training counts its validations), including resumed runs' time. */
  timeElapsed(stage: TimerStage = 'train'): number {
    const running = this.startedAt[stage];
    return this.spent[stage] + (running === undefined ? 0 : (Date.now() - running) / 1000);
  }

  /** Seconds of the budget left. */
  timeRemaining(): number {
    return Math.max(0, this.duration - this.timeElapsed('train'));
  }

  preFit(): void {
    if (!this.resumed) {
      this.spent.train = 0;
      this.spent.validate = 0;
    }
    this.resumed = false;
    this.startedAt.train = Date.now();
  }

  postFit(): void {
    this.stop('train');
  }

  onException(): void {
    this.stop('train');
    this.stop('validate');
  }

  preValidation(): void {
    this.startedAt.validate = Date.now();
  }

  postValidation(): void {
    this.stop('validate');
  }

  onProgress(_logs: unknown, trainer: TrainerView): void {
    if (this.interval === 'step') this.check(trainer);
  }

  postEpoch(_epoch: number, _logs: unknown, trainer: TrainerView): void {
    this.check(trainer);
  }

  onSaveCheckpoint(checkpoint: CheckpointInfo): void {
    checkpoint.state.callbacks[STATE_KEY] = {
      train: this.timeElapsed('train'),
      validate: this.timeElapsed('validate'),
    };
  }

  onLoadCheckpoint(checkpoint: CheckpointInfo): void {
    const saved = checkpoint.state.callbacks?.[STATE_KEY] as Partial<Record<TimerStage, number>> | undefined;
    this.spent.train = saved?.train ?? 0;
    this.spent.validate = saved?.validate ?? 0;
    this.resumed = true;
  }

  private stop(stage: TimerStage): void {
    this.spent[stage] = this.timeElapsed(stage);
    this.startedAt[stage] = undefined;
  }

  private check(trainer: TrainerView): void {
    if (!trainer.shouldStop && this.timeElapsed('train') >= this.duration) {
      trainer.stop(`Timer: ${this.duration} s of training reached`);
    }
  }
}
