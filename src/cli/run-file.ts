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
import type { ModelLike, ModelSpec } from '../nn/model-spec';
import { Module } from '../nn/module/module';
import type { Callback } from '../training/callbacks';
import type { TrainerConfig } from '../training/config';
import type { LossSpec, NamedOptimizer, OptimizerSpec, SchedulerSpec } from '../training/objectives';
import { didYouMean } from '../options/closest-match';

/**
 * Where a dataset comes from: a format and its files (Dataset.fromIdx, fromNpy, fromNpz, fromSafetensors, fromCsv,
 * fromImageFolder, fromImageCsv).
 */
export type DataSource = (
  | { format: 'idx'; inputs: string; targets: string; options?: Record<string, unknown> }
  | { format: 'npy'; inputs: string; targets: string }
  | { format: 'npz' | 'safetensors'; path: string; fields?: Record<string, string> }
  | { format: 'csv' | 'imageFolder' | 'imageCsv'; path: string; options?: Record<string, unknown> }
) & { transforms?: TransformSpec[] };

/** A callback by its class name, with the options its constructor takes. */
export type CallbackEntry = string | { name: string; options?: Record<string, unknown> };

/**
 * A model written as TypeScript modules, from a CommonJS file (compiled TypeScript): the export
 * `export` (default: the module's default export) is a Module subclass, built with `args`, or a
 * Module instance.
 */
export interface ModuleFileSpec {
  type: 'module';
  path: string;
  export?: string;
  args?: unknown[];
}

export interface RunFile {
  /** A model spec (nn.sequential's JSON form), { type: 'torchscript', path }, or { type: 'module', path, export, args }. */
  model: ModelSpec | ModuleFileSpec;
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

export const RUN_FILE_KEYS = [
  'model',
  'loss',
  'optimizer',
  'optimizers',
  'lrScheduler',
  'data',
  'config',
  'callbacks',
  'saveModel',
] as const;

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
  if (!isObject(values))
    throw invalid(`${file}: expected an object with model, data and config, got ${JSON.stringify(values)}`);
  return values;
}

/** Checks the run's shape (fields deeper down are checked by the Trainer's schemas, which name them). */
export function checkRunFile(values: Record<string, unknown>, file: string): RunFile {
  for (const key of Object.keys(values)) {
    if (!(RUN_FILE_KEYS as readonly string[]).includes(key)) {
      throw invalid(`${file}.${key}: unknown field${didYouMean(key, RUN_FILE_KEYS)}`);
    }
  }
  if (!isObject(values.model))
    throw invalid(`${file}: model must be a model spec object, like { "type": "sequential", "layers": [...] }`);
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
    case 'imageFolder':
      data = await Dataset.fromImageFolder(at(source.path, 'path'), source.options ?? {});
      break;
    case 'imageCsv':
      data = await Dataset.fromImageCsv(at(source.path, 'path'), source.options ?? {});
      break;
    default: {
      const format = (source as { format?: unknown }).format;
      const known = ['idx', 'npy', 'npz', 'safetensors', 'csv', 'imageFolder', 'imageCsv'];
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

/** The model, its file paths resolved against the run file's folder; a module file loaded and built. */
export function resolveModel(model: ModelSpec | ModuleFileSpec, folder: string): ModelLike {
  if (model.type === 'torchscript') return { ...model, path: path.resolve(folder, model.path) };
  if (model.type !== 'module') return model;
  const file = path.resolve(folder, model.path);
  if (!fs.existsSync(file)) throw firebrandError('ERR_FIREBRAND_FILE', `model.path: ${file} does not exist`);
  let exports: Record<string, unknown>;
  try {
    exports = require(file) as Record<string, unknown>;
  } catch (error) {
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `model.path: ${file} cannot be loaded as CommonJS (${(error as Error).message})`,
    );
  }
  const name = model.export ?? 'default';
  const value = exports[name];
  if (value === undefined) {
    const names = Object.keys(exports);
    throw invalid(
      `model.export: ${file} has no export '${name}'${didYouMean(name, names)}; it exports ${names.join(', ') || 'nothing'}`,
    );
  }
  if (value instanceof Module) return value;
  if (typeof value === 'function' && value.prototype instanceof Module) {
    return new (value as new (...args: unknown[]) => Module)(...(model.args ?? []));
  }
  throw invalid(
    `model.export: '${name}' of ${file} is not an nn.Module subclass or instance (is the file using another copy of firebrand?)`,
  );
}
