// Saves the model for inference at epoch ends and keeps the best `saveTopK`
// by a monitored metric (Lightning's ModelCheckpoint); each save is a folder
// Model.load reads. Training checkpoints for resuming are config.outputDir's.
import fs from 'node:fs';
import path from 'node:path';

import type { Callback, TrainerView } from '../training/callbacks';
import type { EpochLogs } from '../training/logs';
import { MonitoredMetric, MonitorMode } from './monitored-metric';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';

export interface ModelCheckpointOptions {
  /** Folder the saves go in. */
  dirpath: string;
  /** Epoch-log field ranking the saves; without one the most recent are kept. */
  monitor?: string;
  mode?: MonitorMode;
  /** Saves kept (-1: all). Default 1. */
  saveTopK?: number;
  /** Also keep the latest epoch's model as `last`. Default false. */
  saveLast?: boolean;
  /** Folder name, with {field} or {field:.4f} from the epoch logs. Default 'epoch={epoch}-step={globalStep}'. */
  filename?: string;
}

const OPTION_KEYS = optionKeys<ModelCheckpointOptions>()([
  'dirpath',
  'monitor',
  'mode',
  'saveTopK',
  'saveLast',
  'filename',
]);

/** 'epoch={epoch}-valLoss={valLoss:.4f}' with the logs' values. */
function formatName(pattern: string, logs: EpochLogs): string {
  return pattern.replace(/\{(\w+)(?::\.(\d+)f)?\}/g, (match, name: string, digits?: string) => {
    const value = (logs as unknown as Record<string, unknown>)[name];
    if (typeof value !== 'number') return match;
    return digits === undefined ? String(value) : value.toFixed(Number(digits));
  });
}

export class ModelCheckpoint implements Callback {
  private readonly metric: MonitoredMetric | undefined;
  private readonly options: Required<Omit<ModelCheckpointOptions, 'monitor' | 'mode'>>;
  /** Saved folders with their scores, best first (or newest first without a monitor). */
  private saved: { folder: string; score: number }[] = [];

  constructor(options: ModelCheckpointOptions) {
    refuseUnknownKeys(options, OPTION_KEYS, 'ModelCheckpoint options');
    this.metric =
      options.monitor === undefined ? undefined : new MonitoredMetric(options.monitor, options.mode ?? 'auto');
    this.options = {
      dirpath: options.dirpath,
      saveTopK: options.saveTopK ?? 1,
      saveLast: options.saveLast ?? false,
      filename: options.filename ?? 'epoch={epoch}-step={globalStep}',
    };
  }

  /** The best save so far, and its score (undefined without a monitor). */
  get bestModelPath(): string | undefined {
    return this.saved[0]?.folder;
  }

  get bestScore(): number | undefined {
    return this.metric === undefined ? undefined : this.saved[0]?.score;
  }

  async postEpoch(_epoch: number, logs: EpochLogs, trainer: TrainerView): Promise<void> {
    if (trainer.shouldStop && this.metric !== undefined && !(this.metric.name in logs)) return;
    const { dirpath, saveTopK, saveLast, filename } = this.options;
    if (saveLast) await trainer.writeModel(path.join(dirpath, 'last'));
    if (saveTopK === 0) return;
    const score = this.metric === undefined ? logs.globalStep : this.metric.valueIn(logs, 'ModelCheckpoint');
    const better = (a: number, b: number) => (this.metric === undefined || this.metric.greaterIsBetter ? a > b : a < b);
    const rank = this.saved.filter((entry) => !better(score, entry.score)).length;
    if (saveTopK > 0 && rank >= saveTopK) return;
    const folder = path.join(dirpath, formatName(filename, logs));
    await trainer.writeModel(folder);
    this.saved = this.saved.filter((entry) => entry.folder !== folder);
    this.saved.splice(rank, 0, { folder, score });
    for (const dropped of saveTopK > 0 ? this.saved.splice(saveTopK) : []) {
      fs.rmSync(dropped.folder, { recursive: true, force: true });
    }
  }
}
