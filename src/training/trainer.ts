// The Trainer: TypeScript orchestration around the C++ engine. Whole stretches
// of steps run in C++ on a worker thread; this class sequences the lifecycle
// (configure, setup, epochs, evaluation, checkpoints), runs the hooks, and
// keeps one operation running at a time.
import path from 'node:path';

import { Dataset } from '../data/dataset';
import { DistributedPlace, deviceForRank, torchrunEnvironment } from '../distributed/torchrun-environment';
import { StreamingDataset } from '../data/streaming-dataset';
import { firebrandError } from '../errors';
import { TORCHSCRIPT_FILE, WEIGHTS_FILE, writeSavedModel } from '../inference/saved-model';
import { builtInLoggers } from '../logging/built-in-loggers';
import type { Logger } from '../logging/logger';
import { LoggingCallback } from '../logging/logging-callback';
import { ModelDescription, native, NativeBatchQueue, NativeDataset, NativeEngine, NativeEpochSegment, NativeFitOptions, NativeEpochResult, NumericArray, TensorData } from '../native';
import type { ModelSpec } from '../nn/layers';
import { ProgressBar } from '../progress/progress-bar';
import { runtimeInfo, setNumThreads, useDeterministicAlgorithms, warnIfSlowBlas } from '../runtime';
import { LIBRARY_VERSION } from '../version';
import { Timer } from '../callbacks/timer';
import { MonitoredMetric } from '../callbacks/monitored-metric';
import type { Callback } from './callbacks';
import { checkOutputDir, checkpointsFolder, pruneCheckpoints, TrainerState, writeCheckpoint } from './checkpoints';
import { ResolvedConfig, resolveConfig, TrainerConfig } from './config';
import { HookRunner } from './hook-runner';
import type { EpochLogs, EvalLogs, History, StepLogs, ValidationLogs } from './logs';
import { prefixedWithVal } from './metrics';
import { LossName, LossSpec, NamedOptimizer, namedSpec, OptimizerName, OptimizerSpec, SchedulerName, SchedulerSpec } from './objectives';
import { findResumePoint } from './resume';

export interface TrainerOptions {
  /** The model; or override configureModels(). */
  model?: ModelSpec;
  /** Required unless the model is a TorchScript module with its own training_step. */
  loss?: LossSpec | LossName;
  /** The model's optimizer; or `optimizers`, for several; or override configureOptimizers(). */
  optimizer?: OptimizerSpec | OptimizerName;
  /** Several optimizers, each on its parameters and its loss from the model's training_step. */
  optimizers?: NamedOptimizer[];
  /** Default: constant learning rate (applied to every optimizer). */
  lrScheduler?: SchedulerSpec | SchedulerName;
  config?: Partial<TrainerConfig>;
  /** Callbacks (objects with some hook methods), or one, TensorFlow.js-style. */
  callbacks?: Callback | Callback[];
  /** Loggers of your own (a W&B or Neptune client), fed alongside config.loggers. */
  loggers?: Logger[];
}

/** What configureModels() returns: the model, with its loss unless it has a training_step. */
export interface ModelConfiguration {
  model: ModelSpec;
  loss?: LossSpec | LossName;
}

/** What configureOptimizers() returns: `optimizer` or `optimizers`, and a schedule. */
export interface OptimizerConfiguration {
  optimizer?: OptimizerSpec | OptimizerName;
  optimizers?: NamedOptimizer[];
  lrScheduler?: SchedulerSpec | SchedulerName;
}

/** What configureDataloaders() returns: fit()'s data when it is called without any. */
export interface DataloaderConfiguration {
  train?: TrainingData;
  eval?: TrainingData;
}

/** Training or evaluation data: a dataset held in C++, or batches streamed from JavaScript. */
export type TrainingData = Dataset | StreamingDataset;

export interface FitOptions {
  /** Evaluated after every epoch (and every evalEvery steps); its loss and metrics appear as valLoss, valAccuracy... */
  evalData?: TrainingData;
  /** Overrides config.numEpochs for this call. */
  numEpochs?: number;
  /** Aborting it stops training at the next step boundary (as shouldStop); fit resolves with the history so far. */
  signal?: AbortSignal;
  /**
   * After an abort (signal, SIGINT/SIGTERM), how long a callback's pending promise may still hold fit;
   * past it fit stops waiting and rejects with ERR_FIREBRAND_CALLBACK_ABANDONED. Default 5000.
   */
  abortGraceMs?: number;
}

/** What a fit carries from checkpoint to checkpoint. */
interface FitRun {
  history: History;
  batchesPerEpoch?: number;
  /** Wall time of the runs this one resumed. */
  priorSeconds: number;
  started: number;
  evalData?: TrainingData;
  bestMetric: MonitoredMetric;
  /** Whether this run's data can pause mid-epoch (datasets can; streams cannot). */
  resumable: boolean;
}

// Hook methods a Trainer subclass may define are the Callback interface's.
export interface Trainer extends Callback {}

/**
 * Trains a model whose steps run in libtorch C++. Use it as is (`new Trainer({ model, loss, optimizer,
 * config, callbacks })`), or subclass it and override configureModels / configureOptimizers /
 * configureDataloaders and any hook method (preEpoch, postValidation, ...): both give the same results.
 */
export class Trainer {
  readonly config: ResolvedConfig;
  /** The callbacks in call order (after the trainer's own hook methods): yours, then built-in ones. */
  readonly callbacks: readonly Callback[];
  /** Every logger metrics go to: config.loggers' and yours. */
  readonly loggers: readonly Logger[];
  private readonly options: TrainerOptions;
  private readonly hooks: HookRunner;
  private nativeEngine: NativeEngine | undefined;
  private settingUp: Promise<void> | undefined;
  private modelSpec: ModelSpec | undefined;
  /** options.model's tensors, described before setup. */
  private describedModel: ModelDescription | undefined;
  private dataloaders: DataloaderConfiguration = {};
  private weightsInitialised = false;
  private runningOperation: string | undefined;
  private stopRequested = false;
  /** Why the running fit stops early (trainer.stop's reason), once something asked it to. */
  private stopReason: string | undefined;
  private saveRequested = false;
  private fitRun: FitRun | undefined;
  /** Set when this process is one rank of several (WORLD_SIZE > 1). */
  private readonly place: DistributedPlace | undefined;

  constructor(options: TrainerOptions = {}) {
    this.options = options;
    this.config = resolveConfig(options.config);
    this.place = torchrunEnvironment();
    // Only rank 0 writes logs.
    this.loggers = this.globalRank === 0 ? [...builtInLoggers(this.config), ...(options.loggers ?? [])] : [];
    const callbacks = options.callbacks === undefined ? [] : Array.isArray(options.callbacks) ? options.callbacks : [options.callbacks];
    this.callbacks = [
      ...callbacks,
      ...(this.config.maxTime === undefined ? [] : [new Timer({ duration: this.config.maxTime })]),
      ...(this.loggers.length > 0 ? [new LoggingCallback(this.loggers)] : []),
      ...(this.config.progressBar ? [new ProgressBar()] : []),
    ];
    this.hooks = new HookRunner(this, this.callbacks);
  }

  /** The model to train (and its loss). Default: options.model and options.loss. Override in subclasses. */
  configureModels(): ModelSpec | ModelConfiguration | Promise<ModelSpec | ModelConfiguration> {
    if (this.options.model === undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'Trainer: give options.model, or override configureModels() in a subclass');
    }
    return { model: this.options.model, loss: this.options.loss };
  }

  /** The optimizer(s) and schedule. Default: options.optimizer / optimizers and lrScheduler. Override in subclasses. */
  configureOptimizers(): OptimizerConfiguration | Promise<OptimizerConfiguration> {
    const { optimizer, optimizers, lrScheduler } = this.options;
    return { optimizer, optimizers, lrScheduler };
  }

  /** The data fit() uses when called without any. Default: none. Override in subclasses. */
  configureDataloaders(): DataloaderConfiguration | Promise<DataloaderConfiguration> {
    return {};
  }

  /**
   * Configures and builds the model, loss and optimizers in C++ (once; fit, evaluate, predict and the
   * other operations call it first). Runs preLaunch, preConfigure, postConfigure, preSetup and postSetup.
   */
  setup(): Promise<void> {
    this.settingUp ??= this.runSetup().catch((error: unknown) => {
      this.settingUp = undefined;
      throw error;
    });
    return this.settingUp;
  }

  private async runSetup(): Promise<void> {
    await this.hooks.run('preLaunch', this);
    await this.hooks.run('preConfigure', this);
    const configured = await this.configureModels();
    // A ModelSpec has a type; a ModelConfiguration holds one as `model`.
    const models: ModelConfiguration = 'type' in configured ? { model: configured } : configured;
    const { optimizer, optimizers, lrScheduler } = await this.configureOptimizers();
    this.dataloaders = await this.configureDataloaders();
    await this.hooks.run('postConfigure', this);
    await this.hooks.run('preSetup', this);
    warnIfSlowBlas();
    setNumThreads(this.config.numThreads);
    if (this.config.deterministic) useDeterministicAlgorithms(true);
    const engine = new native.NativeEngine({
      model: models.model,
      loss: models.loss === undefined ? undefined : namedSpec<LossSpec>(models.loss),
      optimizer: optimizer === undefined ? undefined : namedSpec<OptimizerSpec>(optimizer),
      optimizers: optimizers?.map((unit) => ({ ...unit, optimizer: namedSpec<OptimizerSpec>(unit.optimizer) })),
      lrScheduler: lrScheduler === undefined ? undefined : namedSpec<SchedulerSpec>(lrScheduler),
      device: this.place === undefined ? this.config.device : deviceForRank(this.config.device, this.place, runtimeInfo().cudaAvailable),
      seed: this.config.seed,
      metrics: [...this.config.metrics],
      mixedPrecision: this.config.mixedPrecision,
      gradScaler: { ...this.config.gradScaler },
      checkFiniteInputs: this.config.checkFiniteInputs,
    });
    // Blocks (off the event loop) until every rank has joined; rank 0's weights win.
    if (this.place !== undefined) {
      const { rank, worldSize, masterAddr, masterPort } = this.place;
      await engine.distribute({ rank, worldSize, masterAddr, masterPort, ...this.config.distributed });
    }
    this.nativeEngine = engine;
    this.modelSpec = models.model;
    await this.hooks.run('postSetup', this);
  }

  private get engine(): NativeEngine {
    if (this.nativeEngine === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        'the trainer is not set up yet: await trainer.setup() first (fit, evaluate and predict do it themselves)',
      );
    }
    return this.nativeEngine;
  }

  /** Set to true (from a callback, say) to end training after the current optimizer step. */
  get shouldStop(): boolean {
    return this.stopRequested;
  }

  set shouldStop(stop: boolean) {
    if (stop) {
      this.stop('trainer.shouldStop was set');
    } else {
      this.stopRequested = false;
      this.stopReason = undefined;
    }
  }

  /**
   * Ends training after the current optimizer step, as `shouldStop = true`, saying why: the progress
   * output prints the reason and fit's history keeps it (`history.stopReason`). The first reason given wins.
   */
  stop(reason: string): void {
    this.stopRequested = true;
    this.stopReason ??= reason;
    this.nativeEngine?.requestStop();
  }

  /** TensorFlow.js's name for shouldStop. */
  get stopTraining(): boolean {
    return this.shouldStop;
  }

  set stopTraining(stop: boolean) {
    this.shouldStop = stop;
  }

  /**
   * Asks for a checkpoint (config.outputDir) at the next optimizer step boundary of the running fit;
   * with streamed data, at the end of the epoch.
   */
  requestSave(): void {
    if (this.config.outputDir === undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_STATE', 'requestSave: checkpoints need config.outputDir');
    }
    if (this.fitRun === undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_STATE', 'requestSave: only during fit (from a callback)');
    }
    this.saveRequested = true;
    if (this.fitRun.resumable) this.engine.requestStop();
  }

  /**
   * Sets the base learning rate (the optimizer's lr, which the schedule scales) of every optimizer, or of
   * the one named: its first parameter group's becomes `lr`, the others' follow in proportion. During fit
   * it applies from the next optimizer step; it is kept in checkpoints and by later fits.
   */
  setLearningRate(lr: number, optimizer?: string): void {
    this.engine.setLearningRate(lr, optimizer);
  }

  /** The learning rate of every optimizer's parameter groups for the next step (named by learningRateNames). */
  get learningRates(): number[] {
    return this.engine.learningRates;
  }

  /** 'adamw', or 'adamw/pg0', 'adamw/pg1' with several groups, or the optimizers' names. */
  get learningRateNames(): string[] {
    return this.engine.learningRateNames;
  }

  /** This process's rank among all training processes (torchrun's RANK; 0 when not distributed). */
  get globalRank(): number {
    return this.place?.rank ?? 0;
  }

  /** Training processes in the run (torchrun's WORLD_SIZE; 1 when not distributed). */
  get worldSize(): number {
    return this.place?.worldSize ?? 1;
  }

  /**
   * Whether any rank's flag is set (each flag separately); the flags themselves when not distributed.
   * Every rank must call it at the same point: it is a collective.
   */
  private async anyRank(flags: boolean[], what: string): Promise<boolean[]> {
    if (this.place === undefined) return flags;
    const sums = await this.engine.sumOverRanks(flags.map(Number), what);
    return sums.map((sum) => sum > 0);
  }

  /**
   * Runs `write` on rank 0 only (checkpoints, saved models); every rank waits until it is done, and
   * fails if it failed. Every rank must call it at the same point.
   */
  private async onRankZero<Result>(what: string, write: () => Promise<Result>): Promise<Result | undefined> {
    if (this.place === undefined) return write();
    let result: Result | undefined;
    let failure: unknown;
    if (this.globalRank === 0) {
      try {
        result = await write();
      } catch (error) {
        failure = error;
      }
    }
    const [failed] = await this.anyRank([failure !== undefined], what);
    if (failure !== undefined) throw failure;
    if (failed) throw firebrandError('ERR_FIREBRAND_DISTRIBUTED', `distributed: rank 0 failed to write ${what}; see its output`);
    return result;
  }

  /**
   * The model's parameters by PyTorch name ('0.weight', 'layer1.0.conv1.weight'), with shapes, in
   * state-dict order — like `model.named_parameters()`. Known right after construction when the model
   * is given as options.model; a subclass's configureModels() model once set up.
   */
  get namedParameters(): ModelDescription['parameters'] {
    return this.modelDescription().parameters;
  }

  /** The model's buffers (BatchNorm's running_mean, running_var, num_batches_tracked) by PyTorch name. */
  get namedBuffers(): ModelDescription['buffers'] {
    return this.modelDescription().buffers;
  }

  /** Elements in all parameters, as `sum(p.numel() for p in model.parameters())`. */
  get parameterCount(): number {
    return this.namedParameters.reduce((count, { shape }) => count + shape.reduce((size, dim) => size * dim, 1), 0);
  }

  private modelDescription(): ModelDescription {
    if (this.nativeEngine !== undefined) return this.nativeEngine.modelDescription;
    const configuredBySubclass = this.configureModels !== Trainer.prototype.configureModels;
    if (configuredBySubclass || this.options.model === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        'the model is not known yet: configureModels() builds it at setup; await trainer.setup() first ' +
          '(fit, evaluate and predict do it themselves)',
      );
    }
    this.describedModel ??= native.NativeModel.describe(this.options.model);
    return this.describedModel;
  }

  /** Optimizer steps taken so far. */
  get globalStep(): number {
    return this.engine.globalStep;
  }

  get device(): string {
    return this.engine.device;
  }

  /**
   * Trains for config.numEpochs epochs (or maxSteps / maxTime); resolves with the history. Without
   * trainData it uses configureDataloaders()'s. With config.outputDir it saves checkpoints (every
   * saveEvery optimizer steps and at each epoch's end), and with resumeFromCheckpoint it continues a
   * saved run exactly where it stopped.
   */
  async fit(trainData?: TrainingData, options: FitOptions = {}): Promise<History> {
    return this.exclusive('fit', async () => {
      let stopWatching = () => {};
      try {
        if (this.config.outputDir !== undefined) checkOutputDir(this.config.outputDir);
        await this.setup();
        this.stopRequested = false;
        this.stopReason = undefined;
        this.saveRequested = false;
        this.engine.clearStop();
        const graceMs = options.abortGraceMs ?? 5000;
        if (!Number.isFinite(graceMs) || graceMs < 0) {
          throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `fit: options.abortGraceMs must be a number of milliseconds >= 0, got ${graceMs}`);
        }
        stopWatching = this.watchInterruptions(options.signal, graceMs);
        const data = trainData ?? this.dataloaders.train;
        if (data === undefined) {
          throw firebrandError(
            'ERR_FIREBRAND_INVALID_ARGUMENT',
            'fit: give trainData, or return { train } from configureDataloaders()',
          );
        }
        return await this.runFit(data, { ...options, evalData: options.evalData ?? this.dataloaders.eval });
      } catch (error) {
        await this.hooks.run('onException', error, this).catch(() => undefined);
        throw error;
      } finally {
        stopWatching();
        this.fitRun = undefined;
      }
    });
  }

  /**
   * Stops training at the next step boundary on `signal`'s abort, or on SIGINT/SIGTERM
   * (config.handleSignals); a second SIGINT/SIGTERM ends the process at once. Returns the unwatch.
   */
  private watchInterruptions(signal: AbortSignal | undefined, graceMs: number): () => void {
    const stop = (reason: string) => {
      this.stop(reason);
      this.hooks.abandonHooksAfter(graceMs);
    };
    const onAbort = () => stop("fit's signal was aborted");
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort);
    let received = 0;
    const onSignal = (name: NodeJS.Signals) => {
      if (++received > 1) process.exit(name === 'SIGINT' ? 130 : 143);
      process.stderr.write(`firebrand: ${name}: stopping after the current step (again to abort at once)\n`);
      stop(`${name} received`);
    };
    if (this.config.handleSignals) {
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    }
    return () => {
      this.hooks.clearAbandonment();
      signal?.removeEventListener('abort', onAbort);
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
      this.fitOptions(),
      numEpochs,
      this.config.maxSteps,
    );
    const resumed = findResumePoint(this.config, plan.batchesPerEpoch, this.worldSize);
    const bestName = this.config.metricForBestModel ?? (options.evalData ? 'valLoss' : 'loss');
    const greater = this.config.greaterIsBetter;
    const run: FitRun = {
      history: resumed?.state.history ?? { epochs: [], evaluations: [], stopped: false, wallTimeSeconds: 0, samplesPerSecond: 0 },
      batchesPerEpoch: plan.batchesPerEpoch,
      priorSeconds: resumed?.state.wallTimeSeconds ?? 0,
      started,
      evalData: options.evalData,
      bestMetric: new MonitoredMetric(bestName, greater === undefined ? 'auto' : greater ? 'max' : 'min'),
      resumable: !streamed,
    };
    this.fitRun = run;
    if (resumed) {
      await this.engine.loadState(resumed.folder);
      await this.hooks.run('onLoadCheckpoint', { folder: resumed.folder, state: resumed.state }, this);
    } else if (this.config.initWeightsFrom !== undefined && !this.weightsInitialised) {
      await this.engine.initWeightsFrom(this.config.initWeightsFrom, true);
    }
    this.weightsInitialised = true;
    const history = run.history;
    const info = { numEpochs, ...plan };
    await this.hooks.run('preFit', info, this);
    await this.hooks.run('onTrainBegin', { ...info });
    const fitSamples = { samples: 0, seconds: 0 };
    for (let epoch = resumed?.state.epoch ?? 0; epoch < numEpochs && !this.stopRequested; epoch++) {
      await this.hooks.run('preEpoch', epoch, this);
      await this.hooks.run('onEpochBegin', epoch, {});
      const startBatch = epoch === resumed?.state.epoch ? resumed.state.batchInEpoch : 0;
      const { result, ended } = await this.trainEpochInSegments(trainData, epoch, startBatch, run);
      const { stopped: _stopped, nextBatch, ...trained } = result;
      fitSamples.samples += trained.samples;
      fitSamples.seconds += trained.seconds;
      let logs: EpochLogs = { epoch, ...trained, globalStep: this.engine.globalStep };
      if (ended === 'stopped') {
        this.stopRequested = true;
        // The checkpoint's history holds finished epochs only; a resumed run redoes this one.
        if (this.config.outputDir) await this.checkpoint(run, epoch, nextBatch, true, false);
        history.epochs.push(logs);
        await this.endEpoch(epoch, logs);
        break;
      }
      if (options.evalData) logs = { ...logs, ...(await this.validate(options.evalData, epoch)) };
      if (monitor !== undefined) this.engine.onEvalMetric(reportedNumber(logs, monitor, 'lrScheduler (reduce_on_plateau)'));
      history.epochs.push(logs);
      const improved = this.updateBest(run, logs);
      this.saveRequested = false;
      // A stop requested during the epoch makes this save the interruption's; one from postEpoch
      // (early stopping) ends a run that finished its epoch.
      const interrupted = this.stopRequested;
      // The checkpoint follows postEpoch so that callbacks' state (onSaveCheckpoint) includes this epoch.
      await this.endEpoch(epoch, logs);
      if (this.config.outputDir) {
        const position = ended === 'maxSteps' ? { epoch, batch: nextBatch } : { epoch: epoch + 1, batch: 0 };
        await this.checkpoint(run, position.epoch, position.batch, interrupted, improved);
      }
      if (ended === 'maxSteps') {
        this.stopReason = `maxSteps: ${this.config.maxSteps} optimizer steps reached`;
        break;
      }
      // A stop from postEpoch (a Timer, say) may come on some ranks only: all go on or stop together.
      [this.stopRequested] = await this.anyRank([this.stopRequested], 'the stop requests');
    }
    history.stopped = this.stopRequested;
    if (this.stopRequested) this.stopReason ??= 'another rank asked to stop';
    if (this.stopReason !== undefined) history.stopReason = this.stopReason;
    history.wallTimeSeconds = wallTimeSeconds(run);
    history.samplesPerSecond = fitSamples.samples / Math.max(fitSamples.seconds, 1e-9);
    if (this.config.loadBestModelAtEnd && history.best?.checkpoint !== undefined) {
      await this.engine.initWeightsFrom(path.join(history.best.checkpoint, WEIGHTS_FILE), true);
    }
    await this.hooks.run('postFit', history, this);
    await this.hooks.run('onTrainEnd', numericLogs(history.epochs.at(-1)));
    return history;
  }

  private async endEpoch(epoch: number, logs: EpochLogs): Promise<void> {
    await this.hooks.run('postEpoch', epoch, logs, this);
    await this.hooks.run('onEpochEnd', epoch, numericLogs(logs));
  }

  /** Notes `logs` in history.best when they beat it; returns whether they did. */
  private updateBest(run: FitRun, logs: EpochLogs): boolean {
    const metric = run.bestMetric;
    const named = this.config.metricForBestModel !== undefined;
    const value = (logs as unknown as Record<string, unknown>)[metric.name];
    if (typeof value !== 'number') {
      if (named) metric.valueIn(logs, 'config.metricForBestModel');
      return false;
    }
    if (!metric.improves(value, run.history.best?.value)) return false;
    run.history.best = { metric: metric.name, value, epoch: logs.epoch, globalStep: logs.globalStep };
    return true;
  }

  /** An evaluation during fit, with its hooks; its logs are val-prefixed. */
  private async validate(data: TrainingData, epoch: number): Promise<ValidationLogs> {
    const globalStep = this.engine.globalStep;
    await this.hooks.run('preValidation', { epoch, globalStep }, this);
    const { loss, samples: _samples, seconds: _seconds, ...metrics } = await this.runEvaluation(data, epoch, this.config.evalBatchSize);
    const logs = { epoch, globalStep, ...prefixedWithVal({ loss, ...metrics }) } as ValidationLogs;
    await this.hooks.run('postValidation', logs, this);
    return logs;
  }

  private runEvaluation(data: TrainingData, epoch: number, batchSize: number): Promise<EvalLogs> {
    return this.hooks.settle(
      withNativeData(data, epoch, (native) =>
        this.engine.evaluate(native, batchSize, {
          epoch,
          onReport: (report) => this.hooks.observe('onEvalProgress', report, this),
          onBatch: this.hooks.batchHook('val'),
        }),
      ),
    );
  }

  /**
   * One epoch from `startBatch`. It pauses at step boundaries where work is due — a checkpoint every
   * saveEvery optimizer steps or on request (with outputDir), an evaluation every evalEvery steps, the
   * end at maxSteps — does it, and continues where it paused (streams pause only for maxSteps).
   */
  private async trainEpochInSegments(
    data: TrainingData,
    epoch: number,
    startBatch: number,
    run: FitRun,
  ): Promise<{ result: NativeEpochResult; ended: 'epoch' | 'stopped' | 'maxSteps' }> {
    const { outputDir, saveEvery, evalEvery, maxSteps } = this.config;
    const saveInterval = run.resumable && outputDir !== undefined ? saveEvery : undefined;
    const evalInterval = run.resumable && run.evalData !== undefined && typeof evalEvery === 'number' ? evalEvery : undefined;
    const onBatch = this.hooks.batchHook('train');
    let segment: NativeEpochSegment = { epoch, startBatch };
    for (;;) {
      const step = this.engine.globalStep;
      const due = [saveInterval, evalInterval]
        .filter((interval): interval is number => interval !== undefined)
        .map((interval) => (Math.floor(step / interval) + 1) * interval);
      if (maxSteps !== undefined) due.push(maxSteps);
      const pauseAt = due.length > 0 ? Math.min(...due) : undefined;
      const result = await this.hooks.settle(
        withNativeData(data, epoch, (native) =>
          this.engine.trainEpoch(native, { ...segment, stopAtGlobalStep: pauseAt }, (report) => this.onReport(report), onBatch),
        ),
      );
      const reached = this.engine.globalStep;
      if (maxSteps !== undefined && reached >= maxSteps) return { result, ended: 'maxSteps' };
      if (!result.stopped) return { result, ended: 'epoch' };
      // Ranks paused at the same step (the engine agrees on stops); they now agree on why.
      [this.stopRequested, this.saveRequested] = await this.anyRank([this.stopRequested, this.saveRequested], 'the stop and save requests');
      if (this.stopRequested) return { result, ended: 'stopped' };
      const requested = this.saveRequested;
      const paused = pauseAt !== undefined && reached >= pauseAt;
      if (!requested && !paused) return { result, ended: 'stopped' };
      this.saveRequested = false;
      this.engine.clearStop();
      if (requested || (saveInterval !== undefined && reached % saveInterval === 0)) {
        await this.checkpoint(run, epoch, result.nextBatch, false, false);
      }
      if (evalInterval !== undefined && reached % evalInterval === 0) {
        run.history.evaluations.push(await this.validate(run.evalData as TrainingData, epoch));
      }
      segment = { ...segment, startBatch: result.nextBatch, continueEpoch: true };
    }
  }

  private onReport(report: StepLogs): void {
    this.hooks.observe('onProgress', report, this);
    if (report.isLogStep) this.hooks.observe('onLog', report, this);
  }

  /** Saves a checkpoint of the position (epoch, batchInEpoch) and prunes old ones. */
  private async checkpoint(run: FitRun, epoch: number, batchInEpoch: number, interrupted: boolean, improved: boolean): Promise<void> {
    const outputDir = this.config.outputDir as string;
    const folder = path.join(checkpointsFolder(outputDir), `step-${this.engine.globalStep}`);
    if (improved && run.history.best) run.history.best.checkpoint = folder;
    const seconds = wallTimeSeconds(run);
    const state: TrainerState = {
      libraryVersion: LIBRARY_VERSION,
      torchVersion: runtimeInfo().torchVersion,
      config: { ...this.config },
      globalStep: this.engine.globalStep,
      epoch,
      batchInEpoch,
      batchesPerEpoch: run.batchesPerEpoch,
      history: { ...run.history, wallTimeSeconds: seconds },
      worldSize: this.worldSize,
      wallTimeSeconds: seconds,
      interrupted,
      callbacks: {},
    };
    await this.hooks.run('onSaveCheckpoint', { folder, state }, this);
    await this.onRankZero(`the checkpoint ${folder}`, async () => {
      const written = await writeCheckpoint(outputDir, state, (temporary) => this.engine.saveState(temporary));
      pruneCheckpoints(outputDir, this.config.saveTotalLimit, [written, run.history.best?.checkpoint]);
    });
  }

  /**
   * Saves the model for inference into `folder` (replaced whole): model.safetensors, a description
   * to rebuild it, and for TorchScript modules model.pt. `Model.load(folder)` reads it back.
   */
  async save(folder: string): Promise<void> {
    // Not a collective: in a distributed run, the rank that calls it writes (`if (trainer.globalRank === 0)`).
    return this.exclusive('save', async () => {
      await this.setup();
      await this.writeModelFiles(folder);
    });
  }

  /**
   * @internal trainer.save without the one-operation guard, for built-in callbacks during fit. In a
   * distributed run every rank calls it (callbacks run on all); rank 0 writes, the others wait.
   */
  async writeModel(folder: string): Promise<void> {
    await this.onRankZero(`the model ${folder}`, () => this.writeModelFiles(folder));
  }

  private writeModelFiles(folder: string): Promise<void> {
    const spec = this.modelSpec as ModelSpec;
    return writeSavedModel(folder, spec, async (temporary) => {
      await this.engine.saveWeights(path.join(temporary, WEIGHTS_FILE));
      if (spec.type === 'torchscript') await this.engine.exportTorchScript(path.join(temporary, TORCHSCRIPT_FILE));
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
  async exportTorchScript(file: string): Promise<void> {
    return this.exclusive('exportTorchScript', async () => {
      await this.setup();
      await this.engine.exportTorchScript(file);
    });
  }

  /**
   * Loads weights only into the model, by state-dict name: a .safetensors file (firebrand's
   * model.safetensors, or one PyTorch wrote with safetensors.torch.save_file) or a TorchScript
   * module's parameters and buffers. Shapes must match; with `strict` (default) so must the names,
   * otherwise the names on either side alone are reported. TorchScript files are code: load only
   * files you trust.
   */
  async initWeightsFrom(file: string, options: { strict?: boolean } = {}): Promise<{ missing: string[]; unexpected: string[] }> {
    return this.exclusive('initWeightsFrom', async () => {
      await this.setup();
      return this.engine.initWeightsFrom(file, options.strict ?? true);
    });
  }

  /** Copies of the model's parameters and buffers, by PyTorch state-dict name ('0.weight', 'hidden.bias'). */
  async stateDict(): Promise<Record<string, TensorData<NumericArray>>> {
    return this.exclusive('stateDict', async () => {
      await this.setup();
      return this.engine.stateDict();
    });
  }

  /** Loss and metrics (accuracy for class-index losses) over a dataset, in eval mode. Default data: configureDataloaders()'s eval. */
  async evaluate(data?: TrainingData, options: { batchSize?: number } = {}): Promise<EvalLogs> {
    return this.exclusive('evaluate', async () => {
      await this.setup();
      const evalData = data ?? this.dataloaders.eval;
      if (evalData === undefined) {
        throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'evaluate: give data, or return { eval } from configureDataloaders()');
      }
      return this.runEvaluation(evalData, 0, options.batchSize ?? this.config.evalBatchSize);
    });
  }

  /**
   * Model outputs for `inputs` of the given full shape (samples first), in eval mode, without gradients.
   * Calls may overlap: they run one after another in call order. During fit they run from the current
   * weights between two optimizer steps, leaving the training run exactly as it would be without them.
   */
  async predict(inputs: NumericArray, shape: number[], options: { batchSize?: number } = {}): Promise<TensorData> {
    await this.setup();
    return this.engine.predict(inputs, shape, options.batchSize ?? this.config.evalBatchSize);
  }

  /** The fit's options as C++ takes them: sent once, to beginFit. */
  private fitOptions(): NativeFitOptions {
    const config = this.config;
    return {
      sampler: { batchSize: config.batchSize, shuffle: config.shuffle, dropLast: config.dropLast, seed: config.seed },
      loader: { numWorkers: config.numWorkers === 'auto' ? undefined : config.numWorkers, prefetchFactor: config.prefetchFactor },
      step: {
        gradientAccumulationSteps: config.gradientAccumulationSteps,
        maxGradNorm: config.maxGradNorm,
        clipValue: config.clipValue,
        nonFiniteLoss: config.nonFiniteLoss,
      },
      logEvery: config.logEvery,
      progressIntervalMs: 200,
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
}

/** Seconds of training of `run`, with those of the runs it resumed. */
function wallTimeSeconds(run: FitRun): number {
  return run.priorSeconds + (Date.now() - run.started) / 1000;
}

/** A number the logs must hold for `owner`, or an error saying why it may be missing. */
function reportedNumber(logs: EpochLogs, name: string, owner: string): number {
  const value = (logs as unknown as Record<string, unknown>)[name];
  if (typeof value !== 'number') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${owner} monitors '${name}', which this fit does not report (accuracy needs a class-index loss)`,
    );
  }
  return value;
}

/** TensorFlow.js-style logs: the numeric fields. */
function numericLogs(logs: object | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(logs ?? {}).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
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
