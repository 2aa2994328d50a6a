// The Trainer: TypeScript orchestration around the C++ engine. Whole stretches
// of steps run in C++ on a worker thread; this class sequences the lifecycle
// (configure, setup, epochs, evaluation, checkpoints), runs the hooks, and
// keeps one operation running at a time.
import path from 'node:path';

import { recordElasticError } from '../distributed/elastic-error-file';
import { lockFolder } from '../io/folder-lock';
import { DistributedPlace, torchrunEnvironment } from '../distributed/torchrun-environment';
import { RankCollectives } from '../distributed/rank-collectives';
import { firebrandError } from '../errors';
import { WEIGHTS_FILE } from '../inference/saved-model';
import { builtInLoggers } from '../logging/built-in-loggers';
import type { Logger } from '../logging/logger';
import {
  GenerateOptions,
  GenerationStep,
  ModelDescription,
  NativeEngine,
  NumericArray,
  Prediction,
  TensorData,
} from '../native';
import type { GenerateTextOptions } from '../inference/generation';
import type { Tokenizer } from '../text/tokenizer';
import { Model } from '../inference/model';
import { ModelPreprocessing } from '../preprocessing/model-preprocessing';
import type { ModelLike } from '../nn/model-spec';
import type { ExportOnnxOptions } from '../export/export-onnx';
import { builtInCallbacks } from '../callbacks/built-in-callbacks';
import type { Callback, TrainerView } from './callbacks';
import { adoptedPreprocessing, type TrainedModel, writeModelFolder, writePretrainedFolder } from './model-files';
import { OperationGuard } from './operation-guard';
import { TrainerSetup } from './trainer-setup';
import { checkOutputDir } from './checkpoints';
import { resolveLora } from './lora';
import { FineTuning } from './fine-tuning';
import type { InitWeightsOptions } from './weight-renames';
import { ResolvedConfig, resolveConfig } from './config';
import { FitControl } from './fit-control';
import { evaluateOn } from './evaluation';
import { FitLoop } from './fit-loop';
import { HookRunner } from './hook-runner';
import type { EvalLogs, History } from './logs';
import type {
  DataloaderConfiguration,
  ModelConfiguration,
  OptimizerConfiguration,
  TrainerOptions,
} from './trainer-options';
import {
  EVALUATE_OPTION_KEYS,
  type EvaluateOptions,
  FIT_OPTION_KEYS,
  type FitOptions,
  type TrainingData,
} from './fit-options';
import { refuseUnknownKeys } from '../options/option-keys';
import { evaluationData, fitData } from './evaluation-classes';

// Hook methods a Trainer subclass may define are the Callback interface's.
export interface Trainer extends Callback {}

/**
 * Trains a model whose steps run in libtorch C++. Use it as is (`new Trainer({ model, loss, optimizer,
 * config, callbacks })`), or subclass it and override configureModels / configureOptimizers /
 * configureDataloaders and any hook method (preEpoch, postValidation, ...): both give the same results.
 */
export class Trainer implements TrainerView {
  readonly config: ResolvedConfig;
  /** The callbacks in call order (after the trainer's own hook methods): yours, then built-in ones. */
  readonly callbacks: readonly Callback[];
  /** Every logger metrics go to: config.loggers' and yours. */
  readonly loggers: readonly Logger[];
  private readonly options: TrainerOptions;
  private readonly hooks: HookRunner;
  /** How the training rows were preprocessed (a dataset's, adopted by fit), saved with the model. */
  private inputPreprocessing: ModelPreprocessing | undefined;
  private readonly operations = new OperationGuard(this);
  private readonly fineTuning: FineTuning;
  private readonly lifecycle: TrainerSetup;
  private readonly control = new FitControl();
  private fitLoop: FitLoop | undefined;
  /** Set when this process is one rank of several (WORLD_SIZE > 1). */
  private readonly place: DistributedPlace | undefined;
  /**
   * Collectives over the run's ranks for user code (torch.distributed's barrier, all_reduce, all_gather,
   * broadcast, on numbers and tensors), and `isMainProcess`; a process's own values when not distributed.
   */
  readonly ranks: RankCollectives;

  constructor(options: TrainerOptions = {}) {
    this.options = options;
    this.config = resolveConfig(options.config);
    const lora = options.lora === undefined ? undefined : resolveLora(options.lora);
    this.place = torchrunEnvironment();
    this.ranks = new RankCollectives(this.place, () => this.engine);
    // Only rank 0 writes logs.
    this.loggers = this.globalRank === 0 ? [...builtInLoggers(this.config), ...(options.loggers ?? [])] : [];
    const callbacks =
      options.callbacks === undefined ? [] : Array.isArray(options.callbacks) ? options.callbacks : [options.callbacks];
    this.callbacks = [...callbacks, ...builtInCallbacks(this.config, this.loggers)];
    this.hooks = new HookRunner(this, this.callbacks);
    const engineAccess = {
      ready: (operation: string) => this.ready(operation),
      current: () => this.engine,
      pretrained: () => this.lifecycle.madeFor('saveAdapter').pretrained,
    };
    this.fineTuning = new FineTuning(engineAccess, this.operations, lora);
    const preprocessing = () => this.inputPreprocessing;
    this.lifecycle = new TrainerSetup(this, {
      config: this.config,
      hooks: this.hooks,
      lora,
      place: this.place,
      preprocessing,
    });
  }

  /** The model to train (and its loss). Default: options.model and options.loss. Override in subclasses. */
  configureModels(): ModelLike | ModelConfiguration | Promise<ModelLike | ModelConfiguration> {
    if (this.options.model === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'Trainer: give options.model, or override configureModels() in a subclass',
      );
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
    return this.ready('setup').then(() => undefined);
  }

  private async ready(operation: string): Promise<NativeEngine> {
    return (await this.lifecycle.ready(operation)).engine;
  }

  private get engine(): NativeEngine {
    return this.lifecycle.madeFor('the trainer is called').engine;
  }

  /** Set to true (from a callback, say) to end training after the current optimizer step. */
  get shouldStop(): boolean {
    return this.control.stopRequested;
  }

  set shouldStop(stop: boolean) {
    if (stop) this.stop('trainer.shouldStop was set');
    else this.control.clearStop();
  }

  /**
   * Ends training after the current optimizer step, as `shouldStop = true`, saying why: the progress
   * output prints the reason and fit's history keeps it (`history.stopReason`). The first reason given wins.
   */
  stop(reason: string): void {
    this.control.stop(reason);
    this.lifecycle.done?.engine.requestStop();
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
    this.control.requestSave(this.config.outputDir, this.fitLoop, () => this.engine.requestStop());
  }

  /** Writes the LoRA adapters alone, in PEFT's layout: FineTuning.saveAdapter. */
  saveAdapter(folder: string): Promise<void> {
    return this.fineTuning.saveAdapter(folder);
  }

  /** Loads adapters saveAdapter (or PEFT) wrote: FineTuning.loadAdapter. */
  loadAdapter(folder: string): Promise<void> {
    return this.fineTuning.loadAdapter(folder);
  }

  /** Folds the adapters into the weights (PEFT's merge_and_unload): FineTuning.mergeAdapter. */
  mergeAdapter(): Promise<void> {
    return this.fineTuning.mergeAdapter();
  }

  /** Stops training these parameters (module paths or names), from the next step during fit: FineTuning.freeze. */
  freeze(patterns: string | string[]): Promise<string[]> {
    return this.fineTuning.freeze(patterns);
  }

  /** Trains them again, new ones in a parameter group of their own: FineTuning.unfreeze. */
  unfreeze(patterns: string | string[], options: { lr?: number } = {}): Promise<string[]> {
    return this.fineTuning.unfreeze(patterns, options);
  }

  /** Sets every optimizer's (or the named one's) base learning rate: FineTuning.setLearningRate. */
  setLearningRate(lr: number, optimizer?: string): void {
    this.fineTuning.setLearningRate(lr, optimizer);
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
   * The model's parameters by PyTorch name ('0.weight', 'layer1.0.conv1.weight'), with shapes, in
   * state-dict order — like `model.named_parameters()`. Known right after construction when the model
   * is given as options.model; a subclass's configureModels() model once set up.
   */
  get namedParameters(): ModelDescription['parameters'] {
    return this.description().parameters;
  }

  /** The model's buffers (BatchNorm's running_mean, running_var, num_batches_tracked) by PyTorch name. */
  get namedBuffers(): ModelDescription['buffers'] {
    return this.description().buffers;
  }

  /** Elements in all parameters, as `sum(p.numel() for p in model.parameters())`. */
  get parameterCount(): number {
    return this.namedParameters.reduce((count, { shape }) => count + shape.reduce((size, dim) => size * dim, 1), 0);
  }

  /**
   * Bytes of optimizer state this process holds (Adam's moments, momentum buffers): all of it, or its share
   * with config.distributed.zeroRedundancyOptimizer.
   */
  async optimizerStateBytes(): Promise<number> {
    return (await this.ready('optimizerStateBytes')).optimizerStateBytes();
  }

  private description(): ModelDescription {
    const given = this.configureModels === Trainer.prototype.configureModels ? this.options.model : undefined;
    return this.lifecycle.description(given);
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
    refuseUnknownKeys(options, FIT_OPTION_KEYS, 'fit options');
    return this.operations.exclusive('fit', 'noHook', async () => {
      let release: (() => void) | undefined;
      try {
        const { outputDir } = this.config;
        if (outputDir !== undefined) checkOutputDir(outputDir);
        // Rank 0 writes outputDir: a second run writing it too is refused, not left to delete these files.
        if (outputDir !== undefined && this.globalRank === 0) release = lockFolder(outputDir, 'fit');
        const { engine, dataloaders } = await this.lifecycle.ready('fit');
        const { data, evalData } = fitData(trainData, options.evalData, dataloaders);
        this.inputPreprocessing = adoptedPreprocessing(this.inputPreprocessing, data, evalData);
        const context = { trainer: this, config: this.config, engine, hooks: this.hooks, ranks: this.ranks };
        this.fitLoop = new FitLoop({ ...context, control: this.control }, data, { ...options, evalData });
        return await this.fitLoop.run();
      } catch (error) {
        await this.hooks.run('onException', error, this).catch(() => undefined);
        recordElasticError(error);
        await this.ranks.tellOthersOf(error);
        throw error;
      } finally {
        this.fitLoop = undefined;
        release?.();
      }
    });
  }

  /**
   * Saves the model for inference into `folder` (replaced whole): model.safetensors, a description
   * to rebuild it, and for TorchScript modules model.pt. `Model.load(folder)` reads it back.
   */
  async save(folder: string): Promise<void> {
    // Not a collective: in a distributed run, the rank that calls it writes (`if (trainer.globalRank === 0)`).
    await this.ready('save');
    await writeModelFolder(folder, this.trainedModelFiles());
  }

  /**
   * @internal trainer.save without the one-operation guard, for built-in callbacks during fit. In a
   * distributed run every rank calls it (callbacks run on all); rank 0 writes, the others wait.
   */
  async writeModel(folder: string): Promise<void> {
    await this.ranks.onRankZero(`the model ${folder}`, () => writeModelFolder(folder, this.trainedModelFiles()));
  }

  /**
   * How the model's inputs are preprocessed: what the training dataset's rows went through (Dataset.fromTable,
   * fromCsv), which trainer.save writes beside the model and predict applies to records.
   */
  get preprocessing(): ModelPreprocessing | undefined {
    return this.inputPreprocessing;
  }

  /** The trained model as trainer.save and savePretrained write it. */
  private trainedModelFiles(): TrainedModel {
    const { modelSpec, pretrained, model } = this.lifecycle.madeFor('save');
    return {
      spec: modelSpec,
      evalBatchSize: this.config.evalBatchSize,
      preprocessing: this.inputPreprocessing,
      unmergedAdapters: this.fineTuning.unmergedAdapters,
      pretrained,
      generation: model.generationDefaults,
      saveWeights: (file) => this.engine.saveWeights(file),
      exportTorchScript: (file) => model.exportTorchScript(file),
    };
  }

  /**
   * Writes a model fromPretrained made back as a Hugging Face checkpoint folder (replaced whole):
   * config.json, model.safetensors under the checkpoint's names and layouts, and the source folder's
   * generation and tokenizer files, so that transformers' from_pretrained loads what was trained here.
   */
  async savePretrained(folder: string): Promise<void> {
    return this.operations.exclusive('savePretrained', 'anyHook', async () => {
      await this.ready('savePretrained');
      await writePretrainedFolder(folder, this.trainedModelFiles());
    });
  }

  /** @internal Loads the weights of a folder writeModel wrote, for built-in callbacks during fit. */
  async readModelWeights(folder: string): Promise<void> {
    await this.engine.initWeightsFrom(path.join(folder, WEIGHTS_FILE), true);
  }

  /** trainer.model.exportTorchScript (Model.exportTorchScript), the trainer set up first. */
  async exportTorchScript(file: string): Promise<void> {
    await (await this.liveModel('exportTorchScript')).exportTorchScript(file);
  }

  /** trainer.model.exportOnnx (Model.exportOnnx), the trainer set up first. */
  async exportOnnx(file: string, options: ExportOnnxOptions = {}): Promise<void> {
    await (await this.liveModel('exportOnnx')).exportOnnx(file, options);
  }

  /** Loads weights only (no optimizer state), by state-dict name, `map` renaming them: FineTuning.initWeightsFrom. */
  initWeightsFrom(
    file: string,
    options: InitWeightsOptions = {},
  ): Promise<{ missing: string[]; unexpected: string[] }> {
    return this.fineTuning.initWeightsFrom(file, options);
  }

  /** trainer.model.stateDict (Model.stateDict), the trainer set up first. */
  async stateDict(): Promise<Record<string, TensorData<NumericArray>>> {
    return (await this.liveModel('stateDict')).stateDict();
  }

  /** Loss and metrics (accuracy for class-index losses) over a dataset, in eval mode. Default data: configureDataloaders()'s eval. */
  async evaluate(data?: TrainingData, options: EvaluateOptions = {}): Promise<EvalLogs> {
    refuseUnknownKeys(options, EVALUATE_OPTION_KEYS, 'evaluate options');
    return this.operations.exclusive('evaluate', 'epochHooks', async () => {
      const { engine, dataloaders } = await this.lifecycle.ready('evaluate');
      const classes = this.inputPreprocessing?.imagePipeline?.classes;
      const evalData = evaluationData(data, dataloaders, classes);
      const batchSize = options.batchSize ?? this.config.evalBatchSize;
      return evaluateOn(this, engine, this.hooks, evalData, 0, batchSize, options.distributed);
    });
  }

  /** trainer.model.predict (Model.predict, all its forms), the trainer set up first. */
  readonly predict: Model['predict'] = (async (...args: unknown[]) => {
    const model = await this.liveModel('predict');
    return (model.predict as (...given: unknown[]) => Promise<Prediction>).apply(model, args);
  }) as Model['predict'];

  /** trainer.model.generate (Model.generate), the trainer set up first; during fit, from the current weights. */
  async *generate(
    prompt: ArrayLike<number> | NumericArray,
    options: GenerateOptions = {},
  ): AsyncGenerator<number, void, undefined> {
    yield* (await this.liveModel('generate')).generate(prompt, options);
  }

  /** trainer.model.generateText (Model.generateText): text pieces that never split a character. */
  async *generateText(
    prompt: string | ArrayLike<number> | NumericArray,
    tokenizer: Tokenizer,
    options: GenerateTextOptions = {},
  ): AsyncGenerator<string, void, undefined> {
    yield* (await this.liveModel('generateText')).generateText(prompt, tokenizer, options);
  }

  /** trainer.model.generateBatch (Model.generateBatch): several prompts sampled together as one batch. */
  async *generateBatch(
    prompts: (ArrayLike<number> | NumericArray)[],
    options: GenerateOptions = {},
  ): AsyncGenerator<(number | null)[], void, undefined> {
    yield* (await this.liveModel('generateBatch')).generateBatch(prompts, options);
  }

  /** trainer.model.generateBatchWithLogprobs (Model.generateBatchWithLogprobs): tokens and their log-probabilities. */
  async *generateBatchWithLogprobs(
    prompts: (ArrayLike<number> | NumericArray)[],
    options: GenerateOptions = {},
  ): AsyncGenerator<GenerationStep, void, undefined> {
    yield* (await this.liveModel('generateBatchWithLogprobs')).generateBatchWithLogprobs(prompts, options);
  }

  /**
   * The trained model (Model): predictions, generation, exports and the state dict, on this trainer's
   * thread; during fit they run between two optimizer steps from the current weights. Set up first
   * (`await trainer.setup()`; fit, evaluate and predict do it themselves).
   */
  get model(): Model {
    return this.lifecycle.madeFor('trainer.model: read').model;
  }

  private async liveModel(operation: string): Promise<Model> {
    return (await this.lifecycle.ready(operation)).model;
  }
}
