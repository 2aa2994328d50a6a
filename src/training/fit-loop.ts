// One fit, top to bottom: the plan, the resume point, epochs of C++ training
// (paused at step boundaries for checkpoints, evaluations and maxSteps),
// validation, the best metric, checkpoints, and the hooks around each.
import path from 'node:path';

import { MonitoredMetric } from '../callbacks/monitored-metric';
import { StreamingDataset } from '../data/streaming-dataset';
import type { TrainerView } from './callbacks';
import type { RankCollectives } from '../distributed/rank-collectives';
import { firebrandError } from '../errors';
import { EMA_WEIGHTS_FILE, WEIGHTS_FILE } from '../inference/saved-model';
import type { NativeEngine, NativeEpochResult } from '../native';
import type { FitPlan, NativeEpochSegment } from '../native-specs';
import { nativeFitOptions } from './engine-setup';
import { dataHandle, evaluateOn, withNativeData } from './evaluation';
import { checkpointState, checkpointsFolder, pruneCheckpoints, writeCheckpoint } from './checkpoints';
import type { ResolvedConfig } from './config';
import type { FitControl } from './fit-control';
import type { HookRunner } from './hook-runner';
import { watchInterruptions } from './interruptions';
import type { EpochLogs, EvalLogs, History, StepLogs, ValidationLogs } from './logs';
import { prefixedWithVal } from './metrics';
import { findResumePoint, stateDigest, type ResumePoint } from './resume';
import type { FitOptions, TrainingData } from './fit-options';

/** What a fit carries from epoch to epoch and checkpoint to checkpoint. */
interface FitRun {
  numEpochs: number;
  history: History;
  batchesPerEpoch?: number;
  /** Where a resumed run starts: its epoch and the batch in it. */
  resumeAt?: { epoch: number; batch: number };
  /** Wall time of the runs this one resumed. */
  priorSeconds: number;
  started: number;
  evalData?: TrainingData;
  bestMetric: MonitoredMetric;
  /** The epoch-log field the LR scheduler watches (reduce_on_plateau). */
  monitor?: keyof EpochLogs;
  /** This run's training samples and seconds, for samplesPerSecond. */
  trained: { samples: number; seconds: number };
}

/** The trainer's parts a fit works with. */
export interface FitContext {
  trainer: TrainerView;
  config: ResolvedConfig;
  engine: NativeEngine;
  hooks: HookRunner;
  ranks: RankCollectives;
  control: FitControl;
}

/**
 * Where a checkpoint's run goes on: its epoch and first untrained batch, or the next epoch's first batch
 * when the checkpoint was saved after its epoch's last batch (a stop by maxSteps on an epoch boundary).
 */
function resumePosition(state: { epoch: number; batchInEpoch: number }, batchesPerEpoch: number | undefined) {
  return batchesPerEpoch !== undefined && state.batchInEpoch >= batchesPerEpoch
    ? { epoch: state.epoch + 1, batch: 0 }
    : { epoch: state.epoch, batch: state.batchInEpoch };
}

export class FitLoop {
  private readonly trainer: TrainerView;
  private readonly config: ResolvedConfig;
  private readonly engine: NativeEngine;
  private readonly hooks: HookRunner;
  private readonly ranks: RankCollectives;
  private readonly control: FitControl;
  /** Whether the data can pause mid-epoch (datasets can; streams cannot). */
  readonly resumable: boolean;

  constructor(
    context: FitContext,
    private readonly data: TrainingData,
    private readonly options: FitOptions,
  ) {
    ({
      trainer: this.trainer,
      config: this.config,
      engine: this.engine,
      hooks: this.hooks,
      ranks: this.ranks,
      control: this.control,
    } = context);
    this.resumable = !(data instanceof StreamingDataset);
  }

  /** Trains to the end (numEpochs, maxSteps, a stop); resolves with the history. */
  /** The fit, from a clean slate of requests, watching its signal and SIGINT/SIGTERM meanwhile. */
  async run(): Promise<History> {
    this.control.clearRequests();
    this.engine.clearStop();
    const stopWatching = watchInterruptions({
      signal: this.options.signal,
      graceMs: this.options.abortGraceMs,
      handleSignals: this.config.handleSignals,
      hooks: this.hooks,
      stop: (reason) => this.trainer.stop(reason),
    });
    try {
      return await this.train();
    } finally {
      stopWatching();
    }
  }

  private async train(): Promise<History> {
    const run = await this.start();
    const { history, numEpochs } = run;
    const info = { numEpochs, ...run.plan };
    await this.hooks.run('preFit', info, this.trainer);
    await this.hooks.run('onTrainBegin', { ...info });
    for (let epoch = run.resumeAt?.epoch ?? 0; epoch < numEpochs && !this.control.stopRequested; epoch++) {
      if (!(await this.trainEpoch(run, epoch))) break;
      // A stop from postEpoch (a Timer, say) may come on some ranks only: all go on or stop together.
      [this.control.stopRequested] = await this.ranks.anyRank([this.control.stopRequested], 'the stop requests');
    }
    history.stopped = this.control.stopRequested;
    if (this.control.stopRequested) this.control.stopReason ??= 'another rank asked to stop';
    if (this.control.stopReason !== undefined) history.stopReason = this.control.stopReason;
    history.wallTimeSeconds = wallTimeSeconds(run);
    history.samplesPerSecond = run.trained.samples / Math.max(run.trained.seconds, 1e-9);
    await this.useFinalWeights(history);
    await this.hooks.run('postFit', history, this.trainer);
    await this.hooks.run('onTrainEnd', numericLogs(history.epochs.at(-1)));
    return history;
  }

  /** The run's plan from C++, its resume point and starting weights. */
  private async start(): Promise<FitRun & { plan: FitPlan }> {
    const { data, options } = this;
    const numEpochs = options.numEpochs ?? this.config.numEpochs;
    const monitor = this.engine.schedulerMonitor as keyof EpochLogs | undefined;
    if (monitor?.startsWith('val') && !options.evalData) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `lrScheduler (reduce_on_plateau) monitors '${monitor}', which needs evalData: pass fit(data, { evalData }) or monitor 'loss'`,
      );
    }
    const started = Date.now();
    const source = data instanceof StreamingDataset ? data.batchesPerEpoch : dataHandle(data, 'trainData').native;
    const plan = this.engine.beginFit(source, nativeFitOptions(this.config), numEpochs, this.config.maxSteps);
    const resumed = await this.agreedResumePoint(plan.batchesPerEpoch);
    const bestName = this.config.metricForBestModel ?? (options.evalData ? 'valLoss' : 'loss');
    const greater = this.config.greaterIsBetter;
    if (resumed) {
      await this.engine.loadState(resumed.folder);
      await this.hooks.run('onLoadCheckpoint', { folder: resumed.folder, state: resumed.state }, this.trainer);
    } else if (this.config.initWeightsFrom !== undefined && !this.control.weightsInitialised) {
      await this.engine.initWeightsFrom(this.config.initWeightsFrom, true);
    }
    this.control.weightsInitialised = true;
    return {
      numEpochs,
      plan,
      history: resumed?.state.history ?? {
        epochs: [],
        evaluations: [],
        stopped: false,
        wallTimeSeconds: 0,
        samplesPerSecond: 0,
      },
      batchesPerEpoch: plan.batchesPerEpoch,
      resumeAt: resumed && resumePosition(resumed.state, plan.batchesPerEpoch),
      priorSeconds: resumed?.state.wallTimeSeconds ?? 0,
      started,
      evalData: options.evalData,
      bestMetric: new MonitoredMetric(bestName, greater === undefined ? 'auto' : greater ? 'max' : 'min'),
      monitor,
      trained: { samples: 0, seconds: 0 },
    };
  }

  /** One epoch with its hooks, validation, best metric and checkpoint; resolves with whether the fit goes on. */
  /** The checkpoint this fit resumes from, the same on every rank (or an error on all of them). */
  private async agreedResumePoint(batchesPerEpoch: number | undefined): Promise<ResumePoint | undefined> {
    let resumed: ResumePoint | undefined;
    let failure: unknown;
    try {
      resumed = findResumePoint(this.config, batchesPerEpoch, this.trainer.worldSize);
    } catch (error) {
      failure = error;
    }
    const point = resumed && { step: resumed.state.globalStep, digest: stateDigest(resumed.state) };
    await this.ranks.agreeOnStart(point, failure !== undefined);
    if (failure !== undefined) throw failure;
    return resumed;
  }

  private async trainEpoch(run: FitRun, epoch: number): Promise<boolean> {
    await this.hooks.run('preEpoch', epoch, this.trainer);
    await this.hooks.run('onEpochBegin', epoch, {});
    const startBatch = epoch === run.resumeAt?.epoch ? run.resumeAt.batch : 0;
    const { result, ended } = await this.trainEpochInSegments(this.data, epoch, startBatch, run);
    const { stopped: _stopped, nextBatch, ...trained } = result;
    run.trained.samples += trained.samples;
    run.trained.seconds += trained.seconds;
    let logs: EpochLogs = { epoch, ...trained, globalStep: this.engine.globalStep };
    if (ended === 'stopped') {
      this.control.stopRequested = true;
      // The checkpoint's history holds finished epochs only; a resumed run redoes this one.
      if (this.config.outputDir) await this.checkpoint(run, epoch, nextBatch, true, false);
      run.history.epochs.push(logs);
      await this.endEpoch(epoch, logs);
      return false;
    }
    if (run.evalData) logs = { ...logs, ...(await this.validate(run.evalData, epoch)) };
    if (run.monitor !== undefined)
      this.engine.onEvalMetric(reportedNumber(logs, run.monitor, 'lrScheduler (reduce_on_plateau)'));
    run.history.epochs.push(logs);
    const improved = this.updateBest(run, logs);
    this.control.saveRequested = false;
    // A stop requested during the epoch makes this save the interruption's; one from postEpoch
    // (early stopping) ends a run that finished its epoch.
    const interrupted = this.control.stopRequested;
    // The checkpoint follows postEpoch so that callbacks' state (onSaveCheckpoint) includes this epoch.
    await this.endEpoch(epoch, logs);
    if (this.config.outputDir) {
      const position = ended === 'maxSteps' ? { epoch, batch: nextBatch } : { epoch: epoch + 1, batch: 0 };
      await this.checkpoint(run, position.epoch, position.batch, interrupted, improved);
    }
    if (ended !== 'maxSteps') return true;
    this.control.stopReason = `maxSteps: ${this.config.maxSteps} optimizer steps reached`;
    return false;
  }

  /** With config.ema the model ends on the averaged weights (the best checkpoint's, with loadBestModelAtEnd). */
  private async useFinalWeights(history: History): Promise<void> {
    if (this.config.loadBestModelAtEnd && history.best?.checkpoint !== undefined) {
      await this.engine.initWeightsFrom(
        path.join(history.best.checkpoint, this.config.ema.enabled ? EMA_WEIGHTS_FILE : WEIGHTS_FILE),
        true,
      );
    } else if (this.config.ema.enabled) {
      await this.engine.copyAverageToModel();
    }
  }

  private async endEpoch(epoch: number, logs: EpochLogs): Promise<void> {
    await this.hooks.run('postEpoch', epoch, logs, this.trainer);
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
    await this.hooks.run('preValidation', { epoch, globalStep }, this.trainer);
    const {
      loss,
      samples: _samples,
      seconds: _seconds,
      ...metrics
    } = await this.runEvaluation(data, epoch, this.config.evalBatchSize);
    const logs = { epoch, globalStep, ...prefixedWithVal({ loss, ...metrics }) } as ValidationLogs;
    await this.hooks.run('postValidation', logs, this.trainer);
    return logs;
  }

  private runEvaluation(data: TrainingData, epoch: number, batchSize: number): Promise<EvalLogs> {
    return evaluateOn(this.trainer, this.engine, this.hooks, data, epoch, batchSize);
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
    const saveInterval = this.resumable && outputDir !== undefined ? saveEvery : undefined;
    const evalInterval =
      this.resumable && run.evalData !== undefined && typeof evalEvery === 'number' ? evalEvery : undefined;
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
          this.engine.trainEpoch(
            native,
            { ...segment, stopAtGlobalStep: pauseAt },
            (report) => this.onReport(report),
            onBatch,
          ),
        ),
      );
      const reached = this.engine.globalStep;
      if (maxSteps !== undefined && reached >= maxSteps) return { result, ended: 'maxSteps' };
      if (!result.stopped) return { result, ended: 'epoch' };
      // Ranks paused at the same step (the engine agrees on stops); they now agree on why.
      [this.control.stopRequested, this.control.saveRequested] = await this.ranks.anyRank(
        [this.control.stopRequested, this.control.saveRequested],
        'the stop and save requests',
      );
      if (this.control.stopRequested) return { result, ended: 'stopped' };
      const requested = this.control.saveRequested;
      const paused = pauseAt !== undefined && reached >= pauseAt;
      if (!requested && !paused) return { result, ended: 'stopped' };
      this.control.saveRequested = false;
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
    this.hooks.observe('onProgress', report, this.trainer);
    if (report.isLogStep) this.hooks.observe('onLog', report, this.trainer);
  }

  /** Saves a checkpoint of the position (epoch, batchInEpoch) and prunes old ones. */
  private async checkpoint(
    run: FitRun,
    epoch: number,
    batchInEpoch: number,
    interrupted: boolean,
    improved: boolean,
  ): Promise<void> {
    const outputDir = this.config.outputDir as string;
    const folder = path.join(checkpointsFolder(outputDir), `step-${this.engine.globalStep}`);
    if (improved && run.history.best) run.history.best.checkpoint = folder;
    const seconds = wallTimeSeconds(run);
    const position = { epoch, batchInEpoch, batchesPerEpoch: run.batchesPerEpoch, interrupted };
    const state = checkpointState(
      this.config,
      this.engine.globalStep,
      position,
      run.history,
      seconds,
      this.trainer.worldSize,
    );
    await this.hooks.run('onSaveCheckpoint', { folder, state }, this.trainer);
    if (this.config.distributed.zeroRedundancyOptimizer) await this.engine.gatherOptimizerState();
    await this.ranks.onRankZero(`the checkpoint ${folder}`, async () => {
      const written = await writeCheckpoint(outputDir, state, (temporary) => this.engine.saveState(temporary));
      pruneCheckpoints(outputDir, this.config.saveTotalLimit, [written, run.history.best?.checkpoint]);
    });
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
  return Object.fromEntries(
    Object.entries(logs ?? {}).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
  );
}
