// A trainer's setup, run once before its first operation: the configure
// methods (a subclass's overrides), the setup hooks, and the engine built in
// C++ with the trainer's model as a Model. A hook of setup itself (which
// setup awaits) never waits for setup: postSetup has the engine already; the
// hooks before it get an error saying so.
import { firebrandError } from '../errors';
import { Model } from '../inference/model';
import type { DistributedPlace } from '../distributed/torchrun-environment';
import { native, type ModelDescription, type NativeEngine } from '../native';
import { modelInputFields, type ModelLike, type ModelSpec, resolveModelSpec } from '../nn/model-spec';
import { Module } from '../nn/module/module';
import { MAX_IMAGE_PIXELS } from '../images/image-pipeline';
import type { ModelPreprocessing } from '../preprocessing/model-preprocessing';
import { checkpointGenerationDefaults } from '../inference/generation-defaults';
import { isHuggingFaceSource, pretrainedSourceOf, type PretrainedSource } from '../pretrained/from-pretrained';
import type { ResolvedConfig } from './config';
import { buildEngine } from './engine-setup';
import { callingHook, type HookRunner } from './hook-runner';
import type { ResolvedLora } from './lora';
import type { DataloaderConfiguration, ModelConfiguration, OptimizerConfiguration } from './trainer-options';

/** The trainer as setup calls it: hooks tell it apart, and a subclass may override its configure methods. */
type Configurable = Parameters<typeof callingHook>[0] & {
  configureModels(): ModelLike | ModelConfiguration | Promise<ModelLike | ModelConfiguration>;
  configureOptimizers(): OptimizerConfiguration | Promise<OptimizerConfiguration>;
  configureDataloaders(): DataloaderConfiguration | Promise<DataloaderConfiguration>;
};

/** What setup made. */
export interface SetUp {
  engine: NativeEngine;
  /** The engine's model as a Model (trainer.model). */
  model: Model;
  modelSpec: ModelSpec;
  /** Where the model's weights came from, when fromPretrained made it. */
  pretrained: PretrainedSource | undefined;
  dataloaders: DataloaderConfiguration;
  /** The model's tensors as they are now (one native call). */
  describe(): ModelDescription;
}

/** What setup reads of its trainer besides the configure methods. */
export interface SetupContext {
  config: ResolvedConfig;
  hooks: HookRunner;
  lora: ResolvedLora | undefined;
  place: DistributedPlace | undefined;
  /** The preprocessing a fit adopted, which the model's predict applies. */
  preprocessing(): ModelPreprocessing | undefined;
}

export class TrainerSetup {
  private settingUp: Promise<void> | undefined;
  /** Setup is running: its hooks must not wait for it. */
  private running = false;
  private made: SetUp | undefined;
  /** options.model's tensors, described before setup. */
  private described: ModelDescription | undefined;

  constructor(
    private readonly trainer: Configurable,
    private readonly context: SetupContext,
  ) {}

  /**
   * The model's tensors: the built model's as they are now, or before setup `given`'s (options.model;
   * undefined when a subclass's configureModels() makes the model, which runs at setup only).
   */
  description(given: ModelLike | undefined): ModelDescription {
    if (this.made !== undefined) return this.made.describe();
    if (given === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        'the model is not known yet: configureModels() builds it at setup; await trainer.setup() first ' +
          '(fit, evaluate and predict do it themselves)',
      );
    }
    this.described ??= native.NativeModel.describe(resolveModelSpec(given));
    return this.described;
  }

  /** What setup made, if it has run. */
  get done(): SetUp | undefined {
    return this.made;
  }

  /** What setup made, set up first; `operation` names the caller in errors. */
  async ready(operation: string): Promise<SetUp> {
    if (this.running && callingHook(this.trainer) !== undefined) return this.madeFor(`${operation}: called`);
    this.settingUp ??= this.run().catch((error: unknown) => {
      this.settingUp = undefined;
      throw error;
    });
    await this.settingUp;
    return this.madeFor(operation);
  }

  /** What setup made, or an error saying why there is none yet (`what` opens it when a hook of setup asked). */
  madeFor(what: string): SetUp {
    const hook = callingHook(this.trainer);
    if (this.made === undefined && this.running && hook !== undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        `${what} from ${hook}, a hook of setup that runs before the model is built; call it from postSetup or a later hook`,
      );
    }
    if (this.made === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        'the trainer is not set up yet: await trainer.setup() first (fit, evaluate and predict do it themselves)',
      );
    }
    return this.made;
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      await this.configureAndBuild();
    } finally {
      this.running = false;
    }
  }

  private async configureAndBuild(): Promise<void> {
    const { trainer, context } = this;
    await context.hooks.run('preLaunch', trainer);
    await context.hooks.run('preConfigure', trainer);
    const configured = await trainer.configureModels();
    // A module or ModelSpec is the model; a ModelConfiguration holds one as `model`.
    const models: ModelConfiguration =
      configured instanceof Module || 'type' in configured ? { model: configured } : configured;
    const { optimizer, optimizers, lrScheduler } = await trainer.configureOptimizers();
    const dataloaders = await trainer.configureDataloaders();
    await context.hooks.run('postConfigure', trainer);
    await context.hooks.run('preSetup', trainer);
    const optimization = { optimizer, optimizers, lrScheduler };
    const { engine, modelSpec } = await buildEngine(context.config, models, optimization, context.lora, context.place);
    const pretrained = pretrainedSourceOf(models.model);
    const nativeModel = engine.model;
    const model = new Model(nativeModel, {
      inputFields: modelInputFields(modelSpec),
      preprocessing: context.preprocessing,
      predictBatchSize: context.config.evalBatchSize,
      maxPixels: MAX_IMAGE_PIXELS,
      generation:
        pretrained && isHuggingFaceSource(pretrained)
          ? checkpointGenerationDefaults(pretrained.generationConfig, pretrained.config)
          : undefined,
    });
    this.made = { engine, model, modelSpec, pretrained, dataloaders, describe: () => nativeModel.description };
    await context.hooks.run('postSetup', trainer);
  }
}
