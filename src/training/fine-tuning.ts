// Fine-tuning a trainer's model: the weights it starts from (initWeightsFrom),
// what trains (freeze, unfreeze), at which base learning rates, and LoRA
// adapters saved, loaded and merged as PEFT's.
// During a fit, changes apply between two optimizer steps (a callback's
// request, as Lightning's BaseFinetuning makes them).
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { native, type NativeEngine } from '../native';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';
import { field, REQUIRED, validate } from '../options/schema';
import { ADAPTER_WEIGHTS_FILE, checkAdapterConfig, type ResolvedLora, writeAdapterConfig } from './lora';
import { learningRate } from './objective-schemas';
import { isHuggingFaceSource, type PretrainedSource } from '../pretrained/from-pretrained';
import type { OperationGuard } from './operation-guard';
import { type InitWeightsOptions, weightRenames } from './weight-renames';

const UNFREEZE_OPTION_KEYS = optionKeys<{ lr?: number }>()(['lr']);
const INIT_WEIGHTS_OPTION_KEYS = optionKeys<InitWeightsOptions>()(['strict', 'map']);

/** How FineTuning reaches its trainer's engine. */
export interface EngineAccess {
  /** The engine, the trainer set up first (naming `operation` if that fails). */
  ready(operation: string): Promise<NativeEngine>;
  /** The engine now, or an error saying the trainer is not set up. */
  current(): NativeEngine;
  /** The checkpoint the model was made from (fromPretrained), once set up. */
  pretrained(): PretrainedSource | undefined;
}

export class FineTuning {
  private adaptersMerged = false;

  constructor(
    private readonly engine: EngineAccess,
    private readonly operations: OperationGuard,
    private readonly lora: ResolvedLora | undefined,
  ) {}

  /** LoRA adapters are in the model, not merged into its weights (which a saved model does not rebuild). */
  get unmergedAdapters(): boolean {
    return this.lora !== undefined && !this.adaptersMerged;
  }

  /**
   * Stops training the parameters under these module paths or with these names (as config.freeze;
   * * within a name part, ** across parts), from the next step when called during fit. Modules left
   * with nothing to train run in eval mode. Resolves with the parameters' names.
   */
  async freeze(patterns: string | string[]): Promise<string[]> {
    return (await this.engine.ready('freeze')).freeze([patterns].flat());
  }

  /**
   * Trains them again, from the next step when called during fit. Parameters the optimizer never held
   * join it as a new parameter group with base learning rate `lr` (default: the first group's / 10, as
   * Lightning's BaseFinetuning). Resolves with their names.
   */
  async unfreeze(patterns: string | string[], options: { lr?: number } = {}): Promise<string[]> {
    refuseUnknownKeys(options, UNFREEZE_OPTION_KEYS, 'unfreeze options');
    const { lr } = options;
    validate({ lr }, { lr: field(learningRate) }, 'unfreeze');
    return (await this.engine.ready('unfreeze')).unfreeze([patterns].flat(), lr);
  }

  /**
   * Sets the base learning rate (the optimizer's lr, which the schedule scales) of every optimizer, or of
   * the one named: its first parameter group's becomes `lr`, the others' follow in proportion. During fit
   * it applies from the next optimizer step (learningRates shows it at once); it is kept in checkpoints
   * and by later fits.
   */
  setLearningRate(lr: number, optimizer?: string): void {
    validate({ lr }, { lr: field(learningRate, REQUIRED) }, 'setLearningRate');
    this.engine.current().setLearningRate(lr, optimizer);
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
    options: InitWeightsOptions = {},
  ): Promise<{ missing: string[]; unexpected: string[] }> {
    refuseUnknownKeys(options, INIT_WEIGHTS_OPTION_KEYS, 'initWeightsFrom options');
    return this.operations.exclusive('initWeightsFrom', 'anyHook', async () => {
      const engine = await this.engine.ready('initWeightsFrom');
      const renames =
        options.map === undefined ? undefined : weightRenames(await native.weightNames(file), options.map);
      return engine.initWeightsFrom(file, options.strict ?? true, renames);
    });
  }

  /**
   * Writes the LoRA adapters alone, as PEFT's save_pretrained does: `folder`/adapter_model.safetensors
   * ("base_model.model.<path>.lora_A.weight", ...) and adapter_config.json. Modules unfrozen to train
   * beside the adapters (a new head) are saved whole, as PEFT's modules_to_save. PEFT and loadAdapter
   * read them back.
   */
  async saveAdapter(folder: string): Promise<void> {
    const lora = this.adapterOptions('saveAdapter');
    const engine = await this.engine.ready('saveAdapter');
    fs.mkdirSync(folder, { recursive: true });
    const modulesToSave = await engine.saveAdapter(path.join(folder, ADAPTER_WEIGHTS_FILE));
    const pretrained = this.engine.pretrained();
    const architecture = pretrained && isHuggingFaceSource(pretrained) ? pretrained.config.architectures : undefined;
    writeAdapterConfig(folder, lora, modulesToSave, {
      name: pretrained?.name,
      architecture: Array.isArray(architecture) ? String(architecture[0]) : undefined,
    });
  }

  /** Loads adapters saveAdapter (or PEFT) wrote for this model; another model's, or another r, is an error naming it. */
  async loadAdapter(folder: string): Promise<void> {
    return this.operations.exclusive('loadAdapter', 'anyHook', async () => {
      checkAdapterConfig(folder, this.adapterOptions('loadAdapter'));
      const engine = await this.engine.ready('loadAdapter');
      await engine.loadAdapter(path.join(folder, ADAPTER_WEIGHTS_FILE));
    });
  }

  /**
   * Folds the adapters into the weights they adapt (W + B·A·alpha/r, PEFT's merge_and_unload) and removes
   * them: the model is the base model again, for save and the exports. The trainer fits no more.
   */
  async mergeAdapter(): Promise<void> {
    return this.operations.exclusive('mergeAdapter', 'afterTraining', async () => {
      this.adapterOptions('mergeAdapter');
      const engine = await this.engine.ready('mergeAdapter');
      await engine.mergeAdapters();
      this.adaptersMerged = true;
    });
  }

  private adapterOptions(operation: string): ResolvedLora {
    if (this.lora === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        `${operation}: the trainer has no LoRA adapters (give it options.lora)`,
      );
    }
    return this.lora;
  }
}
