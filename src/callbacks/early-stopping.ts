// Stops training when a metric has not improved for `patience` epochs
// (Keras' and Lightning's EarlyStopping), optionally restoring the weights of
// the best epoch at the end.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Callback, CheckpointInfo, TrainerView } from '../training/callbacks';
import type { EpochLogs } from '../training/logs';
import { MonitoredMetric, MonitorMode } from './monitored-metric';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';

export interface EarlyStoppingOptions {
  /** Epoch-log field. Default 'valLoss'. */
  monitor?: string;
  /** Default 'auto' (min for losses and errors, max otherwise). */
  mode?: MonitorMode;
  /** Epochs without improvement before stopping. Default 3. */
  patience?: number;
  /** Smallest change that counts as an improvement. Default 0. */
  minDelta?: number;
  /** At the end, load the weights of the best epoch. Default false. */
  restoreBestWeights?: boolean;
}

const OPTION_KEYS = optionKeys<EarlyStoppingOptions>()([
  'monitor',
  'mode',
  'patience',
  'minDelta',
  'restoreBestWeights',
]);

const STATE_KEY = 'EarlyStopping';

export class EarlyStopping implements Callback {
  private readonly metric: MonitoredMetric;
  private readonly patience: number;
  private readonly restoreBestWeights: boolean;
  private best: number | undefined;
  private waited = 0;
  private snapshot: string | undefined;
  private resumed = false;
  /** The epoch whose value was best, and the epoch training stopped after (if it did). */
  bestEpoch: number | undefined;
  stoppedEpoch: number | undefined;

  constructor(options: EarlyStoppingOptions = {}) {
    refuseUnknownKeys(options, OPTION_KEYS, 'EarlyStopping options');
    this.metric = new MonitoredMetric(options.monitor ?? 'valLoss', options.mode ?? 'auto', options.minDelta ?? 0);
    this.patience = options.patience ?? 3;
    this.restoreBestWeights = options.restoreBestWeights ?? false;
  }

  preFit(): void {
    // A resumed fit got its counters from the checkpoint.
    if (this.resumed) {
      this.resumed = false;
      return;
    }
    this.best = undefined;
    this.waited = 0;
    this.bestEpoch = undefined;
    this.stoppedEpoch = undefined;
  }

  onSaveCheckpoint(checkpoint: CheckpointInfo): void {
    checkpoint.state.callbacks[STATE_KEY] = { best: this.best, waited: this.waited, bestEpoch: this.bestEpoch };
  }

  onLoadCheckpoint(checkpoint: CheckpointInfo): void {
    const saved = checkpoint.state.callbacks?.[STATE_KEY] as
      { best?: number; waited?: number; bestEpoch?: number } | undefined;
    this.best = saved?.best;
    this.waited = saved?.waited ?? 0;
    this.bestEpoch = saved?.bestEpoch;
    this.stoppedEpoch = undefined;
    this.resumed = true;
  }

  async postEpoch(epoch: number, logs: EpochLogs, trainer: TrainerView): Promise<void> {
    // An epoch cut short by a stop has no evaluation; training ends anyway.
    if (trainer.shouldStop) return;
    const value = this.metric.valueIn(logs, 'EarlyStopping');
    if (this.metric.improves(value, this.best)) {
      this.best = value;
      this.bestEpoch = epoch;
      this.waited = 0;
      if (this.restoreBestWeights) {
        this.snapshot ??= path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-best-')), 'model');
        await trainer.writeModel(this.snapshot);
      }
      return;
    }
    if (++this.waited >= this.patience) {
      this.stoppedEpoch = epoch;
      const best =
        this.best === undefined ? '' : ` (best ${this.best.toPrecision(4)} in history.epochs[${this.bestEpoch ?? 0}])`;
      trainer.stop(
        `EarlyStopping: ${this.metric.name} did not improve for ${this.waited} epoch${this.waited === 1 ? '' : 's'}${best}`,
      );
    }
  }

  async postFit(_history: unknown, trainer: TrainerView): Promise<void> {
    if (this.snapshot === undefined) return;
    if (this.restoreBestWeights) await trainer.readModelWeights(this.snapshot);
    fs.rmSync(path.dirname(this.snapshot), { recursive: true, force: true });
    this.snapshot = undefined;
  }
}
