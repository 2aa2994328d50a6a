// The Trainer: TypeScript orchestration around the C++ engine. Whole stretches
// of steps run in C++ on a worker thread; this class sequences the lifecycle
// (configure, setup, epochs, evaluation, checkpoints), runs the hooks, and
// keeps one operation running at a time.
import fs from 'node:fs';
import path from 'node:path';

import { DistributedPlace, deviceForRank, torchrunEnvironment } from '../distributed/torchrun-environment';
import { RankCollectives } from '../distributed/rank-collectives';
import { firebrandError } from '../errors';
import { TORCHSCRIPT_FILE, WEIGHTS_FILE, writeSavedModel } from '../inference/saved-model';
import { builtInLoggers } from '../logging/built-in-loggers';
import type { Logger } from '../logging/logger';
import {
  GenerateOptions,
  ModelDescription,
  native,
  NativeEngine,
  NumericArray,
  Prediction,
  TensorData,
} from '../native';
import { Model } from '../inference/model';
import { MAX_IMAGE_PIXELS } from '../preprocessing/image-preprocessing';
import { ModelPreprocessing } from '../preprocessing/model-preprocessing';
import { modelInputFields, type ModelLike, type ModelSpec, resolveModelSpec } from '../nn/model-spec';
import type { ExportOnnxOptions } from '../export/export-onnx';
import { Module } from '../nn/module/module';
import { modelDtype } from '../nn/module/tracer';
import {
  isHuggingFaceSource,
  pretrainedSourceOf,
  pretrainedSourcesIn,
  pretrainedStopTokens,
  type PretrainedSource,
} from '../pretrained/from-pretrained';
import { loadPretrainedWeights } from '../pretrained/load-weights';
import { writePretrained } from '../pretrained/save-pretrained';
import { runtimeInfo, setNumThreads, useDeterministicAlgorithms, warnIfSlowBlas } from '../runtime';
import { builtInCallbacks } from '../callbacks/built-in-callbacks';
import { TRAIN_BATCH_HOOKS, VAL_BATCH_HOOKS, type Callback } from './callbacks';
import { checkOutputDir } from './checkpoints';
import { weightRenames, type WeightNameMap } from './weight-renames';
import { ADAPTER_WEIGHTS_FILE, checkAdapterConfig, resolveLora, type ResolvedLora, writeAdapterConfig } from './lora';
import { ResolvedConfig, resolveConfig } from './config';
import { FitControl } from './fit-control';
import { evaluateOn, FitLoop } from './fit-loop';
import { callingHook, HookRunner } from './hook-runner';
import { watchInterruptions } from './interruptions';
import type { EvalLogs, History } from './logs';
import { checkMetrics } from './metrics';
import { learningRate, resolveObjectives } from './objective-schemas';
import { field, REQUIRED, validate } from '../options/schema';
import type {
  DataloaderConfiguration,
  FitOptions,
  ModelConfiguration,
  OptimizerConfiguration,
  TrainerOptions,
  TrainingData,
} from './trainer-options';
import { EVALUATE_OPTION_KEYS, type EvaluateOptions, FIT_OPTION_KEYS } from './trainer-options';
import { refuseUnknownKeys } from '../options/option-keys';
import { withTrainingClasses } from './evaluation-classes';

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
  private readonly lora?: ResolvedLora;
  private adaptersMerged = false;
  private readonly hooks: HookRunner;
  private nativeEngine: NativeEngine | undefined;
  /** The engine's model as a Model (trainer.model), made with the engine. */
  private trainedModel: Model | undefined;
  private settingUp: Promise<void> | undefined;
  /** runSetup is running: its hooks must not wait for it. */
  private setupRunning = false;
  private modelSpec: ModelSpec | undefined;
  /** Where the model's weights came from, when fromPretrained made it. */
  private pretrained: PretrainedSource | undefined;
  /** options.model's tensors, described before setup. */
  private describedModel: ModelDescription | undefined;
  private dataloaders: DataloaderConfiguration = {};
  /** How the training rows were preprocessed (a dataset's, adopted by fit), saved with the model. */
  private inputPreprocessing: ModelPreprocessing | undefined;
  private runningOperation: string | undefined;
  private readonly control = new FitControl();
  private fitLoop: FitLoop | undefined;
  /** Set when this process is one rank of several (WORLD_SIZE > 1). */
  private readonly place: DistributedPlace | undefined;
  private readonly ranks: RankCollectives;

  constructor(options: TrainerOptions = {}) {
    this.options = options;
    this.config = resolveConfig(options.config);
    this.lora = options.lora === undefined ? undefined : resolveLora(options.lora);
    this.place = torchrunEnvironment();
    this.ranks = new RankCollectives(this.place, () => this.engine);
    // Only rank 0 writes logs.
    this.loggers = this.globalRank === 0 ? [...builtInLoggers(this.config), ...(options.loggers ?? [])] : [];
    const callbacks =
      options.callbacks === undefined ? [] : Array.isArray(options.callbacks) ? options.callbacks : [options.callbacks];
    this.callbacks = [...callbacks, ...builtInCallbacks(this.config, this.loggers)];
    this.hooks = new HookRunner(this, this.callbacks);
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

  /**
   * The engine, set up first. A hook of setup itself (which setup awaits) never waits for setup:
   * postSetup has the engine already; the hooks before it get an error saying so.
   */
  private async ready(operation: string): Promise<NativeEngine> {
    if (this.setupRunning && callingHook(this) !== undefined) return this.engineFor(`${operation}: called`);
    this.settingUp ??= this.runSetup().catch((error: unknown) => {
      this.settingUp = undefined;
      throw error;
    });
    await this.settingUp;
    return this.engine;
  }

  private async runSetup(): Promise<void> {
    this.setupRunning = true;
    try {
      await this.buildEngine();
    } finally {
      this.setupRunning = false;
    }
  }

  private async buildEngine(): Promise<void> {
    await this.hooks.run('preLaunch', this);
    await this.hooks.run('preConfigure', this);
    const configured = await this.configureModels();
    // A module or ModelSpec is the model; a ModelConfiguration holds one as `model`.
    const models: ModelConfiguration =
      configured instanceof Module || 'type' in configured ? { model: configured } : configured;
    const { optimizer, optimizers, lrScheduler } = await this.configureOptimizers();
    this.dataloaders = await this.configureDataloaders();
    await this.hooks.run('postConfigure', this);
    await this.hooks.run('preSetup', this);
    warnIfSlowBlas();
    setNumThreads(this.config.numThreads);
    if (this.config.deterministic) useDeterministicAlgorithms(true);
    const objectives = resolveObjectives(models.loss, { optimizer, optimizers, lrScheduler });
    checkMetrics(this.config.metrics, objectives.loss?.name);
    const modelSpec = resolveModelSpec(models.model);
    const engine = new native.NativeEngine({
      model: modelSpec,
      ...objectives,
      device:
        this.place === undefined
          ? this.config.device
          : deviceForRank(this.config.device, this.place, runtimeInfo().cudaAvailable),
      seed: this.config.seed,
      metrics: [...this.config.metrics],
      mixedPrecision: this.config.mixedPrecision,
      gradScaler: { ...this.config.gradScaler },
      ema: { ...this.config.ema },
      checkFiniteInputs: this.config.checkFiniteInputs,
      lossOutput: this.config.lossOutput,
      freeze: this.config.freeze === undefined ? undefined : [this.config.freeze].flat(),
      lora: this.lora,
      activationCheckpointing:
        this.config.activationCheckpointing === undefined ? undefined : [this.config.activationCheckpointing].flat(),
    });
    // Blocks (off the event loop) until every rank has joined; rank 0's weights win.
    if (this.place !== undefined) {
      const { rank, worldSize, masterAddr, masterPort } = this.place;
      await engine.distribute({ rank, worldSize, masterAddr, masterPort, ...this.config.distributed });
    }
    // A checkpoint's weights (fromPretrained, torchvision.models), for the model or modules inside it:
    // every rank reads the same files.
    for (const { path: prefix, module, source } of pretrainedSourcesIn(models.model)) {
      await loadPretrainedWeights(engine, module, source, prefix);
    }
    this.pretrained = pretrainedSourceOf(models.model);
    this.nativeEngine = engine;
    this.modelSpec = modelSpec;
    this.trainedModel = new Model(engine.model, {
      inputFields: modelInputFields(modelSpec),
      preprocessing: () => this.inputPreprocessing,
      predictBatchSize: this.config.evalBatchSize,
      maxPixels: MAX_IMAGE_PIXELS,
      stopTokens: pretrainedStopTokens(this.pretrained),
    });
    await this.hooks.run('postSetup', this);
  }

  private get engine(): NativeEngine {
    return this.engineFor('the trainer is called');
  }

  /** The engine, or an error saying why there is none yet (`what` opens it when a hook of setup asked). */
  private engineFor(what: string): NativeEngine {
    const hook = callingHook(this);
    if (this.nativeEngine === undefined && this.setupRunning && hook !== undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        `${what} from ${hook}, a hook of setup that runs before the model is built; call it from postSetup or a later hook`,
      );
    }
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
    return this.control.stopRequested;
  }

  set shouldStop(stop: boolean) {
    if (stop) {
      this.stop('trainer.shouldStop was set');
    } else {
      this.control.stopRequested = false;
      this.control.stopReason = undefined;
    }
  }

  /**
   * Ends training after the current optimizer step, as `shouldStop = true`, saying why: the progress
   * output prints the reason and fit's history keeps it (`history.stopReason`). The first reason given wins.
   */
  stop(reason: string): void {
    this.control.stop(reason);
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
    if (this.fitLoop === undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_STATE', 'requestSave: only during fit (from a callback)');
    }
    this.control.saveRequested = true;
    if (this.fitLoop.resumable) this.engine.requestStop();
  }

  /**
   * Writes the LoRA adapters alone, as PEFT's save_pretrained does: `folder`/adapter_model.safetensors
   * ("base_model.model.<path>.lora_A.weight", ...) and adapter_config.json. Modules unfrozen to train
   * beside the adapters (a new head) are saved whole, as PEFT's modules_to_save. PEFT and this
   * trainer's loadAdapter read them back.
   */
  async saveAdapter(folder: string): Promise<void> {
    const lora = this.adapterOptions('saveAdapter');
    const engine = await this.ready('saveAdapter');
    fs.mkdirSync(folder, { recursive: true });
    const modulesToSave = await engine.saveAdapter(path.join(folder, ADAPTER_WEIGHTS_FILE));
    writeAdapterConfig(folder, lora, modulesToSave);
  }

  /** Loads adapters saveAdapter (or PEFT) wrote for this model; another model's, or another r, is an error naming it. */
  async loadAdapter(folder: string): Promise<void> {
    return this.exclusive('loadAdapter', 'anyHook', async () => {
      checkAdapterConfig(folder, this.adapterOptions('loadAdapter'));
      const engine = await this.ready('loadAdapter');
      await engine.loadAdapter(path.join(folder, ADAPTER_WEIGHTS_FILE));
    });
  }

  /**
   * Folds the adapters into the weights they adapt (W + B·A·alpha/r, PEFT's merge_and_unload) and removes
   * them: the model is the base model again, for save and exportTorchScript. The trainer fits no more.
   */
  async mergeAdapter(): Promise<void> {
    return this.exclusive('mergeAdapter', 'afterTraining', async () => {
      this.adapterOptions('mergeAdapter');
      const engine = await this.ready('mergeAdapter');
      await engine.mergeAdapters();
      this.adaptersMerged = true;
    });
  }

  private adapterOptions(operation: string): ResolvedLora {
    if (this.lora === undefined)
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        `${operation}: the trainer has no LoRA adapters (give it options.lora)`,
      );
    return this.lora;
  }

  /**
   * Fine-tuning: stops training the parameters under these module paths or with these names (as
   * config.freeze; * within a name part, ** across parts), from the next step when called during
   * fit. Modules left with nothing to train run in eval mode. Resolves with the parameters' names.
   */
  async freeze(patterns: string | string[]): Promise<string[]> {
    const engine = await this.ready('freeze');
    return engine.freeze([patterns].flat());
  }

  /**
   * Trains them again, from the next step when called during fit (a callback: Lightning's
   * BaseFinetuning). Parameters the optimizer never held join it as a new parameter group with base
   * learning rate `lr` (default: the first group's / 10, as Lightning's). Resolves with their names.
   */
  async unfreeze(patterns: string | string[], { lr }: { lr?: number } = {}): Promise<string[]> {
    validate({ lr }, { lr: field(learningRate) }, 'unfreeze');
    const engine = await this.ready('unfreeze');
    return engine.unfreeze([patterns].flat(), lr);
  }

  /**
   * Sets the base learning rate (the optimizer's lr, which the schedule scales) of every optimizer, or of
   * the one named: its first parameter group's becomes `lr`, the others' follow in proportion. During fit
   * it applies from the next optimizer step (learningRates shows it at once); it is kept in checkpoints
   * and by later fits.
   */
  setLearningRate(lr: number, optimizer?: string): void {
    validate({ lr }, { lr: field(learningRate, REQUIRED) }, 'setLearningRate');
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
   * The model's parameters by PyTorch name ('0.weight', 'layer1.0.conv1.weight'), with shapes, in
   * state-dict order — like `model.named_parameters()`. Known right after construction when the model
   * is given as options.model; a subclass's configureModels() model once set up.
   */
  get namedParameters(): ModelDescription['parameters'] {
    return this.trainedModel?.namedParameters ?? this.describedBeforeSetup().parameters;
  }

  /** The model's buffers (BatchNorm's running_mean, running_var, num_batches_tracked) by PyTorch name. */
  get namedBuffers(): ModelDescription['buffers'] {
    return this.trainedModel?.namedBuffers ?? this.describedBeforeSetup().buffers;
  }

  /** Elements in all parameters, as `sum(p.numel() for p in model.parameters())`. */
  get parameterCount(): number {
    return this.namedParameters.reduce((count, { shape }) => count + shape.reduce((size, dim) => size * dim, 1), 0);
  }

  /** options.model's tensors before setup builds it (a subclass's configureModels() is not called for this). */
  private describedBeforeSetup(): ModelDescription {
    const configuredBySubclass = this.configureModels !== Trainer.prototype.configureModels;
    if (configuredBySubclass || this.options.model === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        'the model is not known yet: configureModels() builds it at setup; await trainer.setup() first ' +
          '(fit, evaluate and predict do it themselves)',
      );
    }
    this.describedModel ??= native.NativeModel.describe(resolveModelSpec(this.options.model));
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
    refuseUnknownKeys(options, FIT_OPTION_KEYS, 'fit options');
    return this.exclusive('fit', 'noHook', async () => {
      let stopWatching = () => {};
      try {
        if (this.config.outputDir !== undefined) checkOutputDir(this.config.outputDir);
        await this.ready('fit');
        this.control.clearRequests();
        this.engine.clearStop();
        const graceMs = options.abortGraceMs ?? 5000;
        if (!Number.isFinite(graceMs) || graceMs < 0) {
          throw firebrandError(
            'ERR_FIREBRAND_INVALID_ARGUMENT',
            `fit: options.abortGraceMs must be a number of milliseconds >= 0, got ${graceMs}`,
          );
        }
        stopWatching = watchInterruptions({
          signal: options.signal,
          graceMs,
          handleSignals: this.config.handleSignals,
          hooks: this.hooks,
          stop: (reason) => this.stop(reason),
        });
        const data = trainData ?? this.dataloaders.train;
        if (data === undefined) {
          throw firebrandError(
            'ERR_FIREBRAND_INVALID_ARGUMENT',
            'fit: give trainData, or return { train } from configureDataloaders()',
          );
        }
        const trainingClasses = (data as { classes?: string[] }).classes;
        const evalData = withTrainingClasses(
          options.evalData ?? this.dataloaders.eval,
          trainingClasses,
          'fit: evalData',
        );
        this.adoptPreprocessing(data, evalData);
        const context = {
          trainer: this,
          config: this.config,
          engine: this.engine,
          hooks: this.hooks,
          ranks: this.ranks,
          control: this.control,
        };
        this.fitLoop = new FitLoop(context, data, { ...options, evalData });
        return await this.fitLoop.run();
      } catch (error) {
        await this.hooks.run('onException', error, this).catch(() => undefined);
        throw error;
      } finally {
        stopWatching();
        this.fitLoop = undefined;
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
    await this.writeModelFiles(folder);
  }

  /**
   * @internal trainer.save without the one-operation guard, for built-in callbacks during fit. In a
   * distributed run every rank calls it (callbacks run on all); rank 0 writes, the others wait.
   */
  async writeModel(folder: string): Promise<void> {
    await this.ranks.onRankZero(`the model ${folder}`, () => this.writeModelFiles(folder));
  }

  /**
   * How the model's inputs are preprocessed: what the training dataset's rows went through (Dataset.fromTable,
   * fromCsv), which trainer.save writes beside the model and predict applies to records.
   */
  get preprocessing(): ModelPreprocessing | undefined {
    return this.inputPreprocessing;
  }

  /**
   * Takes the training data's preprocessing; another than the one an earlier fit took is an error. Images are
   * served as the evaluation data's were transformed (no random crops or flips), so an image dataset in
   * evalData gives its pipeline, with the training images' classes.
   */
  private adoptPreprocessing(data: TrainingData, evalData: TrainingData | undefined): void {
    const preprocessingOf = (source: TrainingData | undefined) =>
      (source as { preprocessing?: ModelPreprocessing } | undefined)?.preprocessing;
    const training = preprocessingOf(data);
    const evaluation = preprocessingOf(evalData)?.imagePipeline;
    // The evaluation images' shape, when their transforms end at one size: predict checks floats against it
    // and exportOnnx's example defaults to it.
    const shape = (evalData as { sampleShape?: number[] } | undefined)?.sampleShape;
    const fixedShape = shape !== undefined && shape.every((size) => size > 0) ? { sampleShape: shape } : {};
    const given =
      training?.imagePipeline !== undefined && evaluation !== undefined
        ? ModelPreprocessing.ofImages({
            ...fixedShape,
            ...evaluation,
            classes: training.imagePipeline.classes ?? evaluation.classes,
          })
        : training;
    if (given === undefined) return;
    if (this.inputPreprocessing !== undefined && !this.inputPreprocessing.sameAs(given)) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'fit: this dataset was preprocessed otherwise than the one an earlier fit trained on (another TablePreprocessor, ' +
          'one fitted on other rows, or other image transforms); preprocess every part as the training data was',
      );
    }
    this.inputPreprocessing = given;
  }

  private writeModelFiles(folder: string): Promise<void> {
    if (this.lora !== undefined && !this.adaptersMerged) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        `save(${folder}): the model has LoRA adapters, which a saved model does not rebuild; merge them first (mergeAdapter) or save them alone (saveAdapter)`,
      );
    }
    const spec = this.modelSpec as ModelSpec;
    return writeSavedModel(folder, spec, this.config.evalBatchSize, async (temporary) => {
      await this.engine.saveWeights(path.join(temporary, WEIGHTS_FILE));
      this.inputPreprocessing?.write(temporary);
      if (spec.type === 'torchscript') await this.model.exportTorchScript(path.join(temporary, TORCHSCRIPT_FILE));
    });
  }

  /**
   * Writes a model fromPretrained made back as a Hugging Face checkpoint folder (replaced whole):
   * config.json, model.safetensors under the checkpoint's names and layouts, and the source folder's
   * generation and tokenizer files, so that transformers' from_pretrained loads what was trained here.
   */
  async savePretrained(folder: string): Promise<void> {
    return this.exclusive('savePretrained', 'anyHook', async () => {
      const engine = await this.ready('savePretrained');
      const source = this.pretrained;
      if (source === undefined || !isHuggingFaceSource(source)) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_STATE',
          `savePretrained(${folder}): the model was not made by fromPretrained, so there is no config.json to write; use save()`,
        );
      }
      if (this.lora !== undefined && !this.adaptersMerged) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_STATE',
          `savePretrained(${folder}): the model has LoRA adapters; merge them first (mergeAdapter) or save them alone (saveAdapter)`,
        );
      }
      await writePretrained(folder, source, modelDtype(this.modelSpec), (file) => engine.saveWeights(file));
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

  /**
   * Loads weights only (no optimizer state), by state-dict name: a .safetensors file (fp16 and bf16 are
   * converted to the model's dtype) or a TorchScript module's parameters and buffers. `map` renames the
   * file's weights first: by prefix ({ 'module.': '', 'encoder.': 'backbone.' }: the longest prefix that
   * fits; '' adds one), or a function of each name returning the new name, or null to leave it out.
   * With `strict` (the default), names that exist on one side only are an error; else they are reported.
   * Shapes must match. TorchScript files are code: load only files you trust.
   */
  async initWeightsFrom(
    file: string,
    options: { strict?: boolean; map?: WeightNameMap } = {},
  ): Promise<{ missing: string[]; unexpected: string[] }> {
    return this.exclusive('initWeightsFrom', 'anyHook', async () => {
      const engine = await this.ready('initWeightsFrom');
      const renames =
        options.map === undefined ? undefined : weightRenames(await native.weightNames(file), options.map);
      return engine.initWeightsFrom(file, options.strict ?? true, renames);
    });
  }

  /** trainer.model.stateDict (Model.stateDict), the trainer set up first. */
  async stateDict(): Promise<Record<string, TensorData<NumericArray>>> {
    return (await this.liveModel('stateDict')).stateDict();
  }

  /** Loss and metrics (accuracy for class-index losses) over a dataset, in eval mode. Default data: configureDataloaders()'s eval. */
  async evaluate(data?: TrainingData, options: EvaluateOptions = {}): Promise<EvalLogs> {
    refuseUnknownKeys(options, EVALUATE_OPTION_KEYS, 'evaluate options');
    return this.exclusive('evaluate', 'epochHooks', async () => {
      const engine = await this.ready('evaluate');
      const evalData = withTrainingClasses(
        data ?? this.dataloaders.eval,
        this.inputPreprocessing?.imagePipeline?.classes,
        'evaluate',
      );
      if (evalData === undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          'evaluate: give data, or return { eval } from configureDataloaders()',
        );
      }
      return evaluateOn(this, engine, this.hooks, evalData, 0, options.batchSize ?? this.config.evalBatchSize);
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
    options: GenerateOptions,
  ): AsyncGenerator<number, void, undefined> {
    yield* (await this.liveModel('generate')).generate(prompt, options);
  }

  /**
   * The trained model (Model): predictions, generation, exports and the state dict, on this trainer's
   * thread; during fit they run between two optimizer steps from the current weights. Set up first
   * (`await trainer.setup()`; fit, evaluate and predict do it themselves).
   */
  get model(): Model {
    this.engineFor('trainer.model: read');
    return this.trainedModel as Model;
  }

  private async liveModel(operation: string): Promise<Model> {
    await this.ready(operation);
    return this.trainedModel as Model;
  }

  /**
   * Runs `body` as the trainer's one operation. While another runs, a call from outside its hooks is
   * refused; a call from one of its hooks runs at that boundary, as far as `inHooks` allows, or is
   * refused at once saying why (never a wait on the operation that awaits the hook).
   */
  private async exclusive<Result>(
    operation: string,
    inHooks: HookPolicy,
    body: () => Promise<Result>,
  ): Promise<Result> {
    if (this.runningOperation) {
      const hook = callingHook(this);
      if (hook === undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_STATE',
          `cannot start ${operation}: this trainer is already running ${this.runningOperation}; await it before starting another`,
        );
      }
      const refusal = refusalInHook(operation, inHooks, hook, this.runningOperation);
      if (refusal !== undefined) throw firebrandError('ERR_FIREBRAND_INVALID_STATE', refusal);
      return body();
    }
    this.runningOperation = operation;
    try {
      return await body();
    } finally {
      this.runningOperation = undefined;
    }
  }
}

/**
 * What an exclusive operation may do when called from a hook of the running one: 'noHook' never,
 * 'epochHooks' from hooks between batches (not per-batch hooks, which a batch waits for),
 * 'afterTraining' from postFit, onTrainEnd and onException, 'anyHook' from any (the engine checks the step boundary).
 */
type HookPolicy = 'noHook' | 'epochHooks' | 'afterTraining' | 'anyHook';

const PER_BATCH_HOOKS: readonly string[] = [...TRAIN_BATCH_HOOKS, ...VAL_BATCH_HOOKS];
const AFTER_TRAINING_HOOKS: readonly string[] = ['postFit', 'onTrainEnd', 'onException'];

/** Why `operation` cannot run from `hook` of the running operation, or undefined when it can. */
function refusalInHook(operation: string, policy: HookPolicy, hook: string, running: string): string | undefined {
  const from = `${operation}: called from ${hook}, a hook of the running ${running}`;
  switch (policy) {
    case 'noHook':
      return `${from}; a trainer runs one ${operation} at a time: start it after ${running} resolves`;
    case 'epochHooks':
      return PER_BATCH_HOOKS.includes(hook)
        ? `${from}, which waits for that hook at every batch while ${operation} would run batches of its own; ` +
            'call it from an epoch hook (preEpoch, postEpoch, postValidation) or use config.evalEvery'
        : undefined;
    case 'afterTraining':
      return running === 'fit' && !AFTER_TRAINING_HOOKS.includes(hook)
        ? `${from}, after which the trainer could not train on; call it from postFit, or after fit resolves`
        : undefined;
    case 'anyHook':
      return undefined;
  }
}
