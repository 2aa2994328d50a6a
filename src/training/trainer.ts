// The Trainer: TypeScript orchestration around the C++ engine. Whole epochs
// of steps run in C++ on a worker thread; this class sequences epochs,
// evaluation and callbacks, and keeps one operation running at a time.
import { Dataset } from '../data/dataset';
import { StreamingDataset } from '../data/streaming-dataset';
import { firebrandError } from '../errors';
import {
  native,
  NativeBatchQueue,
  NativeDataset,
  NativeEngine,
  NativeEpochOptions,
  NumericArray,
  StepReport,
  TensorData,
} from '../native';
import type { ModelSpec } from '../nn/layers';
import { ProgressBar } from '../progress/progress-bar';
import { setNumThreads, warnIfSlowBlas } from '../runtime';
import type { Callback } from './callbacks';
import { resolveConfig, TrainerConfig } from './config';
import type { EpochLogs, EvalLogs, History } from './logs';
import { prefixedWithVal } from './metrics';
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
}

/** Training or evaluation data: a dataset held in C++, or batches streamed from JavaScript. */
export type TrainingData = Dataset | StreamingDataset;

export interface FitOptions {
  /** Evaluated after every epoch; its loss and accuracy appear as valLoss and valAccuracy. */
  evalData?: TrainingData;
  /** Overrides config.numEpochs for this call. */
  numEpochs?: number;
}

export class Trainer {
  readonly config: TrainerConfig;
  private readonly engine: NativeEngine;
  private readonly callbacks: Callback[];
  private runningOperation: string | undefined;
  private stopRequested = false;

  constructor(options: TrainerOptions) {
    this.config = resolveConfig(options.config);
    warnIfSlowBlas();
    setNumThreads(this.config.numThreads);
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
    this.callbacks = [...(options.callbacks ?? [])];
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

  /** Trains for config.numEpochs epochs; resolves with one entry per epoch. */
  async fit(trainData: TrainingData, options: FitOptions = {}): Promise<History> {
    return this.exclusive('fit', async () => {
      const numEpochs = options.numEpochs ?? this.config.numEpochs;
      const monitor = this.engine.schedulerMonitor as keyof EpochLogs | undefined;
      if (monitor?.startsWith('val') && !options.evalData) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `lrScheduler (reduce_on_plateau) monitors '${monitor}', which needs evalData: pass fit(data, { evalData }) or monitor 'loss'`,
        );
      }
      this.stopRequested = false;
      this.engine.clearStop();
      const plan = this.engine.beginFit(
        trainData instanceof StreamingDataset ? trainData.batchesPerEpoch : dataHandle(trainData, 'trainData').native,
        this.epochOptions(0),
        numEpochs,
      );
      const history: History = { epochs: [], stopped: false };
      await this.each((callback) => callback.onTrainBegin?.({ numEpochs, ...plan }, this));
      for (let epoch = 0; epoch < numEpochs && !this.stopRequested; epoch++) {
        await this.each((callback) => callback.onEpochBegin?.(epoch, this));
        const result = await withNativeData(trainData, epoch, (data) =>
          this.engine.trainEpoch(data, this.epochOptions(epoch), (report) => this.dispatchReport(report)),
        );
        const { stopped, ...trained } = result;
        let logs: EpochLogs = { epoch, ...trained, globalStep: this.engine.globalStep };
        if (options.evalData && !stopped) {
          const { loss, samples: _samples, seconds: _seconds, ...metrics } = await withNativeData(
            options.evalData,
            epoch,
            (data) => this.engine.evaluate(data, this.config.evalBatchSize),
          );
          logs = { ...logs, ...prefixedWithVal({ loss, ...metrics }) };
        }
        if (monitor !== undefined && !stopped) {
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
        if (stopped) this.stopRequested = true;
        await this.each((callback) => callback.onEpochEnd?.(epoch, logs, this));
      }
      history.stopped = this.stopRequested;
      await this.each((callback) => callback.onTrainEnd?.(history, this));
      return history;
    });
  }

  /**
   * Writes the model as a TorchScript module (eval mode) that torch.jit.load runs in Python or C++:
   * a sequential model becomes aten ops over its weights; a TorchScript model is saved as trained.
   */
  async exportTorchScript(path: string): Promise<void> {
    return this.exclusive('exportTorchScript', () => this.engine.exportTorchScript(path));
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
    for (const callback of this.callbacks) {
      callback.onProgress?.(report, this);
      if (report.isLogStep) callback.onLog?.(report, this);
    }
  }

  private async each(hook: (callback: Callback) => void | Promise<void>): Promise<void> {
    for (const callback of this.callbacks) await hook(callback);
  }
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
