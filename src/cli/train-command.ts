// `firebrand train run.json [--set key=value ...]`: one whole training run
// from a run file, with overrides; prints the history's summary as JSON.
import path from 'node:path';

import { fieldDescriptions } from '../options/schema';
import { configSchema } from '../training/config-schema';
import type { LossName, OptimizerName, SchedulerName } from '../training/objectives';
import { Trainer } from '../training/trainer';
import { applyOverride } from './overrides';
import { UsageError } from './usage-error';
import { checkRunFile, loadData, makeCallbacks, readRunFile, resolveModel, RUN_FILE_KEYS } from './run-file';

export const TRAIN_USAGE = `Usage: firebrand train <run.json> [--set key=value ...]

Trains from one JSON file:
  {
    "model": { "type": "sequential", "layers": [...] } or { "type": "torchscript", "path": "model.pt" },
    "loss": "cross_entropy",
    "optimizer": { "name": "adamw", "lr": 0.001 },
    "lrScheduler": { "name": "cosine", "warmupSteps": 100 },
    "data": { "train": { "format": "csv", "path": "train.csv" }, "eval": { ... } },
    "config": { "numEpochs": 5, "batchSize": 64, ... },
    "callbacks": ["LearningRateMonitor", { "name": "EarlyStopping", "options": { "patience": 3 } }],
    "saveModel": "out/model"
  }
Data formats: idx (inputs, targets, options), npy (inputs, targets), npz and safetensors (path, fields),
csv (path, options: labelColumn, delimiter, header, targets). Each may list "transforms".
Callbacks: EarlyStopping, ModelCheckpoint, LearningRateMonitor, Timer.

--set key=value   overrides a field by its dotted path (optimizer.lr=0.01); a bare name is a config
                  field (numEpochs=10). Values are JSON when they parse, else strings.

Config fields (default, then what each accepts):`;

/** --help's text: the usage and every config field with its default. */
export function trainHelp(): string {
  const entries = fieldDescriptions(configSchema);
  const fieldWidth = Math.max(...entries.map((entry) => entry.field.length));
  const defaultWidth = Math.max(...entries.map((entry) => entry.default.length));
  const fields = entries.map(
    (entry) => `  ${entry.field.padEnd(fieldWidth)}  ${entry.default.padEnd(defaultWidth)}  ${entry.accepts}`,
  );
  return `${TRAIN_USAGE}\n${fields.join('\n')}\n`;
}

/** Parses the arguments after `train`; undefined means --help was asked for. */
export function parseTrainArguments(args: string[]): { file: string; overrides: string[] } | undefined {
  if (args.includes('--help') || args.includes('-h')) return undefined;
  const overrides: string[] = [];
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--set') {
      const assignment = args[++i];
      if (assignment === undefined) throw new UsageError('--set needs key=value');
      overrides.push(assignment);
    } else if (args[i].startsWith('--set=')) {
      overrides.push(args[i].slice('--set='.length));
    } else if (args[i].startsWith('-')) {
      throw new UsageError(`unknown option ${args[i]}`);
    } else {
      files.push(args[i]);
    }
  }
  if (files.length !== 1)
    throw new UsageError(files.length === 0 ? 'give a run file' : `give one run file, got ${files.join(', ')}`);
  return { file: files[0], overrides };
}

export async function runTrain(file: string, overrides: string[], write: (text: string) => void): Promise<void> {
  const values = readRunFile(file);
  for (const assignment of overrides) applyOverride(values, assignment, RUN_FILE_KEYS);
  const run = checkRunFile(values, file);
  const folder = path.dirname(path.resolve(file));
  const resolved = (relative: string | undefined) =>
    relative === undefined ? undefined : path.resolve(folder, relative);
  const config = { ...run.config };
  for (const key of ['outputDir', 'initWeightsFrom'] as const) config[key] = resolved(config[key]);
  if (typeof config.resumeFromCheckpoint === 'string')
    config.resumeFromCheckpoint = resolved(config.resumeFromCheckpoint);
  const trainer = new Trainer({
    model: resolveModel(run.model, folder),
    loss: run.loss as LossName | undefined,
    optimizer: run.optimizer as OptimizerName | undefined,
    optimizers: run.optimizers,
    lrScheduler: run.lrScheduler as SchedulerName | undefined,
    config,
    callbacks: makeCallbacks(run.callbacks),
  });
  const train = await loadData(run.data.train, folder, 'data.train');
  const evalData = run.data.eval === undefined ? undefined : await loadData(run.data.eval, folder, 'data.eval');
  const history = await trainer.fit(train, { evalData });
  if (run.saveModel !== undefined) await trainer.save(path.resolve(folder, run.saveModel));
  const last = history.epochs.at(-1);
  write(
    `${JSON.stringify({
      epochs: history.epochs.length,
      globalStep: trainer.globalStep,
      stopped: history.stopped,
      best: history.best,
      last:
        last === undefined
          ? undefined
          : Object.fromEntries(Object.entries(last).filter(([, value]) => typeof value === 'number')),
      wallTimeSeconds: history.wallTimeSeconds,
      samplesPerSecond: history.samplesPerSecond,
      savedModel: run.saveModel === undefined ? undefined : path.resolve(folder, run.saveModel),
    })}\n`,
  );
}
