// The Trainer: TypeScript orchestration around the C++ engine. Whole epochs
// of steps run in C++ on a worker thread; this class sequences epochs,
// evaluation and callbacks, and keeps one operation running at a time.
import path from 'node:path';

import { Dataset } from '../data/dataset';
import { StreamingDataset } from '../data/streaming-dataset';
import { firebrandError } from '../errors';
import {
  native,
  NativeBatchQueue,
  NativeDataset,
  NativeEngine,
  NativeEpochOptions,
  NativeEpochResult,
  NumericArray,
  StepReport,
  TensorData,
} from '../native';
import type { ModelSpec } from '../nn/layers';
import { CsvLogger } from '../logging/csv-logger';
import { JsonLinesLogger } from '../logging/jsonl-logger';
import type { Logger } from '../logging/logger';
import { LoggingCallback } from '../logging/logging-callback';
import { TensorBoardLogger } from '../logging/tensorboard/tensorboard-logger';
import { ProgressBar } from '../progress/progress-bar';
import { runtimeInfo, setNumThreads, useDeterministicAlgorithms, warnIfSlowBlas } from '../runtime';
import { LIBRARY_VERSION } from '../version';
import { TORCHSCRIPT_FILE, WEIGHTS_FILE, writeSavedModel } from '../inference/saved-model';
import type { Callback } from './callbacks';
import { checkpointsFolder, latestCheckpoint, pruneCheckpoints, readTrainerState, TrainerState, writeCheckpoint } from './checkpoints';
import { resolveConfig, TrainerConfig } from './config';
import type { EpochLogs, EvalLogs, History } from './logs';
import { prefixedWithVal } from './metrics';
import type { ValMetricLogs } from './metrics';
import {
  LossName,
  LossSpec,
  NamedOptimizer,
  namedSpec,
  OptimizerName,
  OptimizerSpec,
  SchedulerName,
  SchedulerSpec,
} from './objectives';

export interface TrainerOptions {
  model: ModelSpec;
  /** Required unless the model is a TorchScript module with its own training_step. */
  loss?: LossSpec | LossName;
  /** The model's optimizer; or `optimizers`, for several. */
  optimizer?: OptimizerSpec | OptimizerName;
  /** Several optimizers, each on its parameters and its loss from the model's training_step. */
  optimizers?: NamedOptimizer[];
  /** Default: constant learning rate (applied to every optimizer). */
  lrScheduler?: SchedulerSpec | SchedulerName;
  config?: Partial<TrainerConfig>;
  callbacks?: Callback[];
  /** Loggers of your own (a W&B or Neptune client), fed alongside config.loggers. */
  loggers?: Logger[];
}

/** Training or evaluation data: a dataset held in C++, or batches streamed from JavaScript. */
export type TrainingData = Dataset | StreamingDataset;

export interface FitOptions {
  /** Evaluated after every epoch; its loss and accuracy appear as valLoss and valAccuracy. */
  evalData?: TrainingData;
  /** Overrides config.numEpochs for this call. */
  numEpochs?: number;
  /** Aborting it stops training at the next step boundary (as stopTraining); fit resolves with the history so far. */
  signal?: AbortSignal;
}

/** What a fit carries from checkpoint to checkpoint. */
interface CheckpointRun {
  history: History;
  bestMetric?: number;
  bestCheckpoint?: string;
  batchesPerEpoch?: number;
  /** Wall time of the runs this one resumed. */
  priorSeconds: number;
  started: number;
  evalData?: TrainingData;
}

export class Trainer {
  readonly config: TrainerConfig;
  private readonly engine: NativeEngine;
  private readonly callbacks: Callback[];
  private readonly modelSpec: ModelSpec;
  private weightsInitialised = false;
  /** When the running fit must stop (config.maxTime), in Date.now() milliseconds. */
  private fitDeadline: number | undefined;
  private runningOperation: string | undefined;
  private stopRequested = false;

  constructor(options: TrainerOptions) {
    this.config = resolveConfig(options.config);
    warnIfSlowBlas();
    setNumThreads(this.config.numThreads);
    if (this.config.deterministic) useDeterministicAlgorithms(true);
    this.engine = new native.NativeEngine({
      model: options.model,
      loss: options.loss === undefined ? undefined : namedSpec<LossSpec>(options.loss),
      optimizer: options.optimizer === undefined ? undefined : namedSpec<OptimizerSpec>(options.optimizer),
      optimizers: options.optimizers?.map((unit) => ({ ...unit, optimizer: namedSpec<OptimizerSpec>(unit.optimizer) })),
      lrScheduler: options.lrScheduler === undefined ? undefined : namedSpec<SchedulerSpec>(options.lrScheduler),
      device: this.config.device,
      seed: this.config.seed,
      metrics: [...this.config.metrics],
      mixedPrecision: this.config.mixedPrecision,
      gradScaler: { ...this.config.gradScaler },
      checkFiniteInputs: this.config.checkFiniteInputs,
    });
    this.modelSpec = options.model;
    this.callbacks = [...(options.callbacks ?? [])];
    const loggers = [...builtInLoggers(this.config), ...(options.loggers ?? [])];
    if (loggers.length > 0) this.callbacks.push(new LoggingCallback(loggers));
    if (this.config.progressBar) this.callbacks.push(new ProgressBar());
  }

  /** Set to true (from a callback, say) to end training after the current step. */
  get stopTraining(): boolean {
    return this.stopRequested;
  }

  set stopTraining(stop: boolean) {
    this.stopRequested = stop;
    if (stop) this.engine.requestStop();
  }

  get parameterCount(): number {
    return this.engine.parameterCount;
  }

  /** Optimizer steps taken so far. */
  get globalStep(): number {
    return this.engine.globalStep;
  }

  get device(): string {
    return this.engine.device;
  }

  /**
   * Trains for config.numEpochs epochs (or maxSteps / maxTime); resolves with one entry per epoch.
   * With config.outputDir it saves checkpoints (every saveEvery optimizer steps and at each epoch's
   * end), and with resumeFromCheckpoint it continues a saved run exactly where it stopped.
   */
  async fit(trainData: TrainingData, options: FitOptions = {}): Promise<History> {
    return this.exclusive('fit', async () => {
      this.stopRequested = false;
      this.engine.clearStop();
      const stopWatching = this.watchInterruptions(options.signal);
      try {
        return await this.runFit(trainData, options);
      } catch (error) {
        await this.each('onException', (callback) => callback.onException?.(error, this)).catch(() => undefined);
        throw error;
      } finally {
        stopWatching();
      }
    });
  }

  /**
   * Stops training at the next step boundary on `signal`'s abort, or on SIGINT/SIGTERM
   * (config.handleSignals); a second SIGINT/SIGTERM ends the process at once. Returns the unwatch.
   */
  private watchInterruptions(signal: AbortSignal | undefined): () => void {
    const stop = () => {
      this.stopTraining = true;
    };
    if (signal?.aborted) stop();
    signal?.addEventListener('abort', stop);
    let received = 0;
    const onSignal = (name: NodeJS.Signals) => {
      if (++received > 1) process.exit(name === 'SIGINT' ? 130 : 143);
      process.stderr.write(`firebrand: ${name}: stopping after the current step (again to abort at once)\n`);
      stop();
    };
    if (this.config.handleSignals) {
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    }
    return () => {
      signal?.removeEventListener('abort', stop);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  }

  private async runFit(trainData: TrainingData, options: FitOptions): Promise<History> {
    const started = Date.now();
    const numEpochs = options.numEpochs ?? this.config.numEpochs;
    const monitor = this.engine.schedulerMonitor as keyof EpochLogs | undefined;
    if (monitor?.startsWith('val') && !options.evalData) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `lrScheduler (reduce_on_plateau) monitors '${monitor}', which needs evalData: pass fit(data, { evalData }) or monitor 'loss'`,
      );
    }
    const streamed = trainData instanceof StreamingDataset;
    const plan = this.engine.beginFit(
      streamed ? trainData.batchesPerEpoch : dataHandle(trainData, 'trainData').native,
      this.epochOptions(0),
      numEpochs,
      this.config.maxSteps,
    );
    const resumed = this.resumePoint(plan.batchesPerEpoch);
    const run: CheckpointRun = {
      history: resumed?.state.history ?? { epochs: [], evaluations: [], stopped: false },
      bestMetric: resumed?.state.bestMetric,
      bestCheckpoint: resumed?.state.bestCheckpoint,
      batchesPerEpoch: plan.batchesPerEpoch,
      priorSeconds: resumed?.state.wallTimeSeconds ?? 0,
      started,
      evalData: options.evalData,
    };
    if (resumed) {
      await this.engine.loadState(resumed.folder);
    } else if (this.config.initWeightsFrom !== undefined && !this.weightsInitialised) {
      await this.engine.initWeightsFrom(this.config.initWeightsFrom, true);
    }
    this.weightsInitialised = true;
    this.fitDeadline = this.config.maxTime === undefined ? undefined : started + this.config.maxTime * 1000;
    const history = run.history;
    await this.each('onTrainBegin', (callback) => callback.onTrainBegin?.({ numEpochs, ...plan }, this));
    for (let epoch = resumed?.state.epoch ?? 0; epoch < numEpochs && !this.stopRequested; epoch++) {
      await this.each('onEpochBegin', (callback) => callback.onEpochBegin?.(epoch, this));
      const startBatch = epoch === resumed?.state.epoch ? resumed.state.batchInEpoch : 0;
      const { result, ended } = await this.trainEpochInSegments(trainData, epoch, startBatch, run);
      const { stopped, nextBatch, ...trained } = result;
      let logs: EpochLogs = { epoch, ...trained, globalStep: this.engine.globalStep };
      if (ended === 'stopped') {
        this.stopRequested = true;
        // The checkpoint's history holds finished epochs only; a resumed run redoes this one.
        if (this.config.outputDir) await this.checkpoint(run, epoch, nextBatch, true);
        history.epochs.push(logs);
        await this.each('onEpochEnd', (callback) => callback.onEpochEnd?.(epoch, logs, this));
        break;
      }
      if (options.evalData) logs = { ...logs, ...(await this.evaluateDuringFit(options.evalData, epoch)) };
      if (monitor !== undefined) {
        const monitored = logs[monitor];
        if (typeof monitored !== 'number') {
          throw firebrandError(
            'ERR_FIREBRAND_INVALID_ARGUMENT',
            `lrScheduler (reduce_on_plateau) monitors '${monitor}', which this fit does not report (accuracy needs a class-index loss)`,
          );
        }
        this.engine.onEvalMetric(monitored);
      }
      history.epochs.push(logs);
      if (this.config.outputDir) {
      // A stop requested meanwhile makes this the run's last save: it is the interruption's.
      const position = ended === 'maxSteps' ? { epoch, batch: nextBatch } : { epoch: epoch + 1, batch: 0 };
      await this.checkpoint(run, position.epoch, position.batch, this.stopRequested, logs);
    }
      await this.each('onEpochEnd', (callback) => callback.onEpochEnd?.(epoch, logs, this));
      if (ended === 'maxSteps') break;
      if (this.fitDeadline !== undefined && Date.now() >= this.fitDeadline) this.stopRequested = true;
    }
    history.stopped = this.stopRequested;
    if (this.config.loadBestModelAtEnd && run.bestCheckpoint !== undefined) {
      await this.engine.initWeightsFrom(path.join(run.bestCheckpoint, WEIGHTS_FILE), true);
    }
    await this.each('onTrainEnd', (callback) => callback.onTrainEnd?.(history, this));
    return history;
  }

  /** Loss and metrics over evalData, as val-prefixed log fields. */
  private async evaluateDuringFit(evalData: TrainingData, epoch: number): Promise<ValMetricLogs & { valLoss: number }> {
    const { loss, samples: _samples, seconds: _seconds, ...metrics } = await withNativeData(evalData, epoch, (data) =>
      this.engine.evaluate(data, this.config.evalBatchSize),
    );
    return prefixedWithVal({ loss, ...metrics }) as ValMetricLogs & { valLoss: number };
  }

  /**
   * One epoch from `startBatch`. It pauses at step boundaries where work is due — a checkpoint every
   * saveEvery optimizer steps (with outputDir), an evaluation every evalEvery steps, the end at
   * maxSteps — does it, and continues where it paused (streams pause only for maxSteps).
   */
  private async trainEpochInSegments(
    data: TrainingData,
    epoch: number,
    startBatch: number,
    run: CheckpointRun,
  ): Promise<{ result: NativeEpochResult; ended: 'epoch' | 'stopped' | 'maxSteps' }> {
    const { outputDir, saveEvery, evalEvery, maxSteps } = this.config;
    const resumable = !(data instanceof StreamingDataset);
    const every = [
      resumable && outputDir !== undefined ? saveEvery : undefined,
      resumable && run.evalData !== undefined && typeof evalEvery === 'number' ? evalEvery : undefined,
    ].filter((interval): interval is number => interval !== undefined);
    let options: NativeEpochOptions = { ...this.epochOptions(epoch), startBatch };
    for (;;) {
      const step = this.engine.globalStep;
      const due = [...every.map((interval) => (Math.floor(step / interval) + 1) * interval), ...(maxSteps === undefined ? [] : [maxSteps])];
      const pauseAt = due.length > 0 ? Math.min(...due) : undefined;
      const result = await withNativeData(data, epoch, (native) =>
        this.engine.trainEpoch(native, { ...options, stopAtGlobalStep: pauseAt }, (report) => this.dispatchReport(report)),
      );
      const reached = this.engine.globalStep;
      if (maxSteps !== undefined && reached >= maxSteps) return { result, ended: 'maxSteps' };
      if (!result.stopped) return { result, ended: 'epoch' };
      if (pauseAt === undefined || reached < pauseAt || this.stopRequested) return { result, ended: 'stopped' };
      if (outputDir !== undefined && saveEvery !== undefined && reached % saveEvery === 0) {
        await this.checkpoint(run, epoch, result.nextBatch, false);
      }
      if (run.evalData !== undefined && typeof evalEvery === 'number' && reached % evalEvery === 0) {
        const evaluation = { epoch, globalStep: reached, ...(await this.evaluateDuringFit(run.evalData, epoch)) };
        run.history.evaluations.push(evaluation);
        await this.each('postValidation', (callback) => callback.postValidation?.(evaluation, this));
      }
      options = { ...options, startBatch: result.nextBatch, continueEpoch: true };
    }
  }

  /** Saves a checkpoint of the position (epoch, batchInEpoch) and prunes old ones. */
  private async checkpoint(run: CheckpointRun, epoch: number, batchInEpoch: number, interrupted: boolean, logs?: EpochLogs): Promise<void> {
    const outputDir = this.config.outputDir as string;
    const metricName = this.config.metricForBestModel;
    const value = metricName !== undefined && logs ? (logs as unknown as Record<string, unknown>)[metricName] : undefined;
    const greaterIsBetter = this.config.greaterIsBetter ?? !/loss|error/i.test(metricName ?? '');
    const improved =
      typeof value === 'number' &&
      (run.bestMetric === undefined || (greaterIsBetter ? value > run.bestMetric : value < run.bestMetric));
    const folder = path.join(checkpointsFolder(outputDir), `step-${this.engine.globalStep}`);
    if (improved) {
      run.bestMetric = value;
      run.bestCheckpoint = folder;
    }
    const state: TrainerState = {
      libraryVersion: LIBRARY_VERSION,
      torchVersion: runtimeInfo().torchVersion,
      config: { ...this.config },
      globalStep: this.engine.globalStep,
      epoch,
      batchInEpoch,
      batchesPerEpoch: run.batchesPerEpoch,
      history: run.history,
      bestMetric: run.bestMetric,
      bestCheckpoint: run.bestCheckpoint,
      worldSize: 1,
      wallTimeSeconds: run.priorSeconds + (Date.now() - run.started) / 1000,
      interrupted,
    };
    const written = await writeCheckpoint(outputDir, state, (temporary) => this.engine.saveState(temporary));
    pruneCheckpoints(outputDir, this.config.saveTotalLimit, [written, run.bestCheckpoint]);
  }

  /** The checkpoint to resume from (config.resumeFromCheckpoint), checked against this run. */
  private resumePoint(batchesPerEpoch: number | undefined): { folder: string; state: TrainerState } | undefined {
    const resume = this.config.resumeFromCheckpoint;
    if (resume === undefined || resume === false) return undefined;
    let folder: string | undefined;
    if (resume === true) {
      if (this.config.outputDir === undefined) {
        throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'resumeFromCheckpoint: true needs config.outputDir, where checkpoints are');
      }
      folder = latestCheckpoint(this.config.outputDir);
      // Nothing saved yet: the first run of a job that resumes whenever restarted.
      if (folder === undefined) return undefined;
    } else {
      folder = resume;
    }
    const state = readTrainerState(folder);
    const differences: string[] = [];
    for (const key of ['batchSize', 'gradientAccumulationSteps', 'seed', 'shuffle', 'dropLast'] as const) {
      if (state.config[key] !== this.config[key]) {
        differences.push(`${key} ${JSON.stringify(state.config[key])} (this run: ${JSON.stringify(this.config[key])})`);
      }
    }
    if (state.worldSize !== 1) differences.push(`world size ${state.worldSize} (this run: 1)`);
    if (state.batchesPerEpoch !== batchesPerEpoch) {
      differences.push(`${state.batchesPerEpoch ?? 'unknown'} batches per epoch (this run: ${batchesPerEpoch ?? 'unknown'})`);
    }
    if (differences.length > 0) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `resumeFromCheckpoint: ${folder} was saved with ${differences.join(', ')}; they must match to continue exactly`,
      );
    }
    return { folder, state };
  }

  /**
   * Saves the model for inference into `folder` (replaced whole): model.safetensors, a description
   * to rebuild it, and for TorchScript modules model.pt. `Model.load(folder)` reads it back.
   */
  async save(folder: string): Promise<void> {
    return this.exclusive('save', () => this.writeModel(folder));
  }

  /** @internal trainer.save without the one-operation guard, for built-in callbacks during fit. */
  writeModel(folder: string): Promise<void> {
    return writeSavedModel(folder, this.modelSpec, async (temporary) => {
      await this.engine.saveWeights(path.join(temporary, WEIGHTS_FILE));
      if (this.modelSpec.type === 'torchscript') await this.engine.exportTorchScript(path.join(temporary, TORCHSCRIPT_FILE));
    });
  }

  /** @internal Loads the weights of a folder writeModel wrote, for built-in callbacks during fit. */
  async readModelWeights(folder: string): Promise<void> {
    await this.engine.initWeightsFrom(path.join(folder, WEIGHTS_FILE), true);
  }

  /**
   * Writes the model as a TorchScript module (eval mode) that torch.jit.load runs in Python or C++:
   * a sequential model becomes aten ops over its weights; a TorchScript model is saved as trained.
   */
  async exportTorchScript(path: string): Promise<void> {
    return this.exclusive('exportTorchScript', () => this.engine.exportTorchScript(path));
  }

  /**
   * Loads weights only into the model, by state-dict name: a .safetensors file (firebrand's
   * model.safetensors, or one PyTorch wrote with safetensors.torch.save_file) or a TorchScript
   * module's parameters and buffers. Shapes must match; with `strict` (default) so must the names,
   * otherwise the names on either side alone are reported. TorchScript files are code: load only
   * files you trust.
   */
  async initWeightsFrom(path: string, options: { strict?: boolean } = {}): Promise<{ missing: string[]; unexpected: string[] }> {
    return this.exclusive('initWeightsFrom', () => this.engine.initWeightsFrom(path, options.strict ?? true));
  }

  /** Copies of the model's parameters and buffers, by PyTorch state-dict name ('0.weight', 'hidden.bias'). */
  async stateDict(): Promise<Record<string, TensorData<NumericArray>>> {
    return this.exclusive('stateDict', () => this.engine.stateDict());
  }

  /** Loss (and accuracy for classification losses) over a dataset, in eval mode. */
  async evaluate(data: TrainingData, options: { batchSize?: number } = {}): Promise<EvalLogs> {
    return this.exclusive('evaluate', () =>
      withNativeData(data, 0, (native) => this.engine.evaluate(native, options.batchSize ?? this.config.evalBatchSize)),
    );
  }

  /** Model outputs for `inputs` of the given full shape (samples first), in eval mode. */
  async predict(inputs: NumericArray, shape: number[], options: { batchSize?: number } = {}): Promise<TensorData> {
    return this.exclusive('predict', () => this.engine.predict(inputs, shape, options.batchSize ?? this.config.evalBatchSize));
  }

  private epochOptions(epoch: number): NativeEpochOptions {
    return {
      batchSize: this.config.batchSize,
      shuffle: this.config.shuffle,
      dropLast: this.config.dropLast,
      seed: this.config.seed,
      epoch,
      numWorkers: this.config.numWorkers,
      prefetchFactor: this.config.prefetchFactor,
      logEvery: this.config.logEvery,
      progressIntervalMs: 200,
      gradientAccumulationSteps: this.config.gradientAccumulationSteps,
      maxGradNorm: this.config.maxGradNorm,
      clipValue: this.config.clipValue,
      nonFiniteLoss: this.config.nonFiniteLoss,
    };
  }

  private async exclusive<Result>(operation: string, body: () => Promise<Result>): Promise<Result> {
    if (this.runningOperation) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        `cannot start ${operation}: this trainer is already running ${this.runningOperation}; await it before starting another`,
      );
    }
    this.runningOperation = operation;
    try {
      return await body();
    } finally {
      this.runningOperation = undefined;
    }
  }

  private dispatchReport(report: StepReport): void {
    if (this.fitDeadline !== undefined && !this.stopRequested && Date.now() >= this.fitDeadline) this.stopTraining = true;
    for (const callback of this.callbacks) {
      try {
        callback.onProgress?.(report, this);
      } catch (error) {
        throw callbackError('onProgress', error);
      }
      try {
        if (report.isLogStep) callback.onLog?.(report, this);
      } catch (error) {
        throw callbackError('onLog', error);
      }
    }
  }

  /** Runs one hook on every callback in order, awaiting each; an error names the hook. */
  private async each(name: keyof Callback, hook: (callback: Callback) => void | Promise<void>): Promise<void> {
    for (const callback of this.callbacks) {
      try {
        await hook(callback);
      } catch (error) {
        throw callbackError(name, error);
      }
    }
  }
}

/** A callback's error, named by its hook; the original is the `cause`. */
function callbackError(hook: string, error: unknown): Error {
  if (error instanceof Error && (error as { hook?: string }).hook !== undefined) return error;
  const message = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(`callback ${hook} threw: ${message}`, { cause: error }), { code: 'ERR_FIREBRAND_CALLBACK', hook });
}

/** config.loggers as logger objects, writing under outputDir/logs. */
function builtInLoggers(config: TrainerConfig): Logger[] {
  if (config.loggers.length === 0) return [];
  if (config.outputDir === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `config.loggers: ${config.loggers.join(', ')} write under config.outputDir, which is not set`,
    );
  }
  const logs = path.join(config.outputDir, 'logs');
  const make = {
    csv: () => new CsvLogger(path.join(logs, 'metrics.csv')),
    jsonl: () => new JsonLinesLogger(path.join(logs, 'metrics.jsonl')),
    tensorboard: () => new TensorBoardLogger(path.join(logs, 'tensorboard')),
  };
  return config.loggers.map((name) => make[name]());
}

function dataHandle(data: unknown, field: string): Dataset {
  if (!(data instanceof Dataset)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${field} must be a Dataset (Dataset.fromIdx, fromArrays, ...) or a StreamingDataset`,
    );
  }
  return data;
}

/** Runs `body` on the native form of `data`: a dataset handle, or a queue fed by the stream's epoch. */
async function withNativeData<Result>(
  data: TrainingData,
  epoch: number,
  body: (native: NativeDataset | NativeBatchQueue) => Promise<Result>,
): Promise<Result> {
  if (data instanceof StreamingDataset) return data.stream(epoch, body);
  return body(dataHandle(data, 'data').native);
}
