// A whole training run in one JSON file (like LightningCLI's config): the
// model, its loss and optimizer, the data files, the trainer config and
// callbacks by name. Paths are relative to the file's folder.
import fs from 'node:fs';
import path from 'node:path';

import { EarlyStopping } from '../callbacks/early-stopping';
import { LearningRateMonitor } from '../callbacks/learning-rate-monitor';
import { ModelCheckpoint } from '../callbacks/model-checkpoint';
import { Timer } from '../callbacks/timer';
import { Dataset } from '../data/dataset';
import type { TransformSpec } from '../data/transforms';
import { firebrandError } from '../errors';
import type { ModelSpec } from '../nn/layers';
import type { Callback } from '../training/callbacks';
import type { TrainerConfig } from '../training/config';
import type { LossSpec, NamedOptimizer, OptimizerSpec, SchedulerSpec } from '../training/objectives';
import { didYouMean } from '../options/closest-match';

/** Where a dataset comes from: a format and its files (Dataset.fromIdx, fromNpy, fromNpz, fromSafetensors, fromCsv). */
export type DataSource = (
  | { format: 'idx'; inputs: string; targets: string; options?: Record<string, unknown> }
  | { format: 'npy'; inputs: string; targets: string }
  | { format: 'npz' | 'safetensors'; path: string; fields?: Record<string, string> }
  | { format: 'csv'; path: string; options?: Record<string, unknown> }
) & { transforms?: TransformSpec[] };

/** A callback by its class name, with the options its constructor takes. */
export type CallbackEntry = string | { name: string; options?: Record<string, unknown> };

export interface RunFile {
  /** A model spec (nn.sequential's JSON form), or { type: 'torchscript', path }. */
  model: ModelSpec;
  loss?: LossSpec | string;
  optimizer?: OptimizerSpec | string;
  optimizers?: NamedOptimizer[];
  lrScheduler?: SchedulerSpec | string;
  data: { train: DataSource; eval?: DataSource };
  config?: Partial<TrainerConfig>;
  callbacks?: CallbackEntry[];
  /** Folder to save the trained model in (trainer.save; Model.load reads it). */
  saveModel?: string;
}

export const RUN_FILE_KEYS = ['model', 'loss', 'optimizer', 'optimizers', 'lrScheduler', 'data', 'config', 'callbacks', 'saveModel'] as const;

const CALLBACKS: Record<string, (options: Record<string, unknown>) => Callback> = {
  EarlyStopping: (options) => new EarlyStopping(options),
  ModelCheckpoint: (options) => new ModelCheckpoint(options as never),
  LearningRateMonitor: (options) => new LearningRateMonitor(options),
  Timer: (options) => new Timer(options as never),
};

function invalid(message: string): Error {
  return firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The run file's JSON as an object (not yet checked: overrides come first). */
export function readRunFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${file}: cannot read the run file (${(error as Error).message})`);
  }
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (error) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${file}: not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(values)) throw invalid(`${file}: expected an object with model, data and config, got ${JSON.stringify(values)}`);
  return values;
}

/** Checks the run's shape (fields deeper down are checked by the Trainer's schemas, which name them). */
export function checkRunFile(values: Record<string, unknown>, file: string): RunFile {
  for (const key of Object.keys(values)) {
    if (!(RUN_FILE_KEYS as readonly string[]).includes(key)) {
      throw invalid(`${file}.${key}: unknown field${didYouMean(key, RUN_FILE_KEYS)}`);
    }
  }
  if (!isObject(values.model)) throw invalid(`${file}: model must be a model spec object, like { "type": "sequential", "layers": [...] }`);
  if (!isObject(values.data) || !isObject(values.data.train)) {
    throw invalid(`${file}: data.train must be a data source, like { "format": "csv", "path": "train.csv" }`);
  }
  for (const key of Object.keys(values.data)) {
    if (key !== 'train' && key !== 'eval') throw invalid(`${file}: data.${key}: unknown (data holds train and eval)`);
  }
  if (values.callbacks !== undefined && !Array.isArray(values.callbacks)) {
    throw invalid(`${file}: callbacks must be a list of names or { name, options }`);
  }
  return values as unknown as RunFile;
}

/** Loads one data source, its paths relative to `folder`; errors name `field`. */
export async function loadData(source: DataSource, folder: string, field: string): Promise<Dataset> {
  const at = (file: unknown, name: string) => {
    if (typeof file !== 'string') throw invalid(`${field}.${name}: expected a file path, got ${JSON.stringify(file)}`);
    return path.resolve(folder, file);
  };
  let data: Dataset;
  switch (source.format) {
    case 'idx':
      data = await Dataset.fromIdx(at(source.inputs, 'inputs'), at(source.targets, 'targets'), source.options ?? {});
      break;
    case 'npy':
      data = await Dataset.fromNpy(at(source.inputs, 'inputs'), at(source.targets, 'targets'));
      break;
    case 'npz':
      data = await Dataset.fromNpz(at(source.path, 'path'), source.fields);
      break;
    case 'safetensors':
      data = await Dataset.fromSafetensors(at(source.path, 'path'), source.fields);
      break;
    case 'csv':
      data = await Dataset.fromCsv(at(source.path, 'path'), source.options ?? {});
      break;
    default: {
      const format = (source as { format?: unknown }).format;
      const known = ['idx', 'npy', 'npz', 'safetensors', 'csv'];
      throw invalid(
        `${field}.format: got ${JSON.stringify(format)}, expected one of ${known.join(', ')}${typeof format === 'string' ? didYouMean(format, known) : ''}`,
      );
    }
  }
  return source.transforms === undefined ? data : data.withTransforms(...source.transforms);
}

/** The callbacks a run names. */
export function makeCallbacks(entries: CallbackEntry[] = []): Callback[] {
  return entries.map((entry, index) => {
    const { name, options = {} } = typeof entry === 'string' ? { name: entry } : entry;
    const make = CALLBACKS[name];
    if (make === undefined) {
      throw invalid(
        `callbacks[${index}]: unknown callback '${name}'${didYouMean(String(name), Object.keys(CALLBACKS))}; known: ${Object.keys(CALLBACKS).join(', ')}`,
      );
    }
    return make(options);
  });
}

/** The model spec with its TorchScript path resolved against the run file's folder. */
export function resolveModel(model: ModelSpec, folder: string): ModelSpec {
  return model.type === 'torchscript' ? { ...model, path: path.resolve(folder, model.path) } : model;
}
