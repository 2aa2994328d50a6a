// A Hugging Face checkpoint as a Model to predict and generate with, with no
// training gear: fromPretrained's module built and loaded by an inference-only
// trainer, a PEFT LoRA adapter applied when one is given (or when the folder
// is an adapter's, as AutoPeftModelForCausalLM reads base_model_name_or_path).
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import type { Model } from '../inference/model';
import { refuseUnknownKeys } from '../options/option-keys';
import { adapterBaseModel, ADAPTER_CONFIG_FILE, loraOfAdapter } from '../training/lora';
import { Trainer } from '../training/trainer';
import {
  CONFIG_FILE,
  FROM_PRETRAINED_OPTIONS,
  fromPretrained,
  type FromPretrainedOptions,
} from '../pretrained/from-pretrained';
import { isHubId } from '../pretrained/hub-download';

export interface LoadPretrainedOptions extends FromPretrainedOptions {
  /** A PEFT LoRA adapter folder (adapter_config.json, adapter_model.safetensors) to apply to the checkpoint. */
  adapter?: string;
  /** 'cpu' (default), 'cuda', 'cuda:<i>', 'mps'. */
  device?: string;
  /** Intra-op threads of the model's runs (the trainer's numThreads). Default: PyTorch's. */
  numThreads?: number;
}

const LOAD_PRETRAINED_OPTION_KEYS = [...FROM_PRETRAINED_OPTIONS, 'adapter', 'device', 'numThreads'];

const isAdapterFolder = (folder: string) =>
  !isHubId(folder) &&
  fs.existsSync(path.join(folder, ADAPTER_CONFIG_FILE)) &&
  !fs.existsSync(path.join(folder, CONFIG_FILE));

/** The checkpoint and adapter that `source` and `adapter` name: an adapter folder alone names its base model. */
export function resolvePretrainedSource(
  source: string,
  adapter: string | undefined,
): { checkpoint: string; adapter?: string } {
  if (!isAdapterFolder(source)) return { checkpoint: source, adapter };
  if (adapter !== undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `loadPretrainedModel: ${source} is an adapter folder itself; give the base checkpoint as the source and it as adapter`,
    );
  }
  const base = adapterBaseModel(source, 'loadPretrainedModel');
  if (base === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `loadPretrainedModel: ${source} is an adapter folder whose ${ADAPTER_CONFIG_FILE} names no base_model_name_or_path; give the base checkpoint as the source and the folder as adapter`,
    );
  }
  return { checkpoint: path.isAbsolute(base) || isHubId(base) ? base : path.resolve(source, base), adapter: source };
}

/**
 * A Hugging Face checkpoint (a folder or a hub id, as fromPretrained takes it) loaded for prediction and
 * generation, as transformers' `AutoModelForCausalLM.from_pretrained`: `options.adapter` applies a PEFT
 * LoRA adapter, and an adapter folder alone loads the base model its adapter_config.json names
 * (`AutoPeftModelForCausalLM`). No loss or optimizer is made.
 */
export async function loadPretrainedModel(source: string, options: LoadPretrainedOptions = {}): Promise<Model> {
  refuseUnknownKeys(options, LOAD_PRETRAINED_OPTION_KEYS, 'loadPretrainedModel options');
  const { adapter: adapterOption, device, numThreads, ...pretrained } = options;
  const { checkpoint, adapter } = resolvePretrainedSource(source, adapterOption);
  const trainer = new Trainer({
    model: await fromPretrained(checkpoint, pretrained),
    lora: adapter === undefined ? undefined : loraOfAdapter(adapter, 'loadPretrainedModel'),
    config: { progressBar: false, device: device ?? 'cpu', ...(numThreads === undefined ? {} : { numThreads }) },
  });
  await trainer.setup();
  if (adapter !== undefined) await trainer.loadAdapter(adapter);
  return trainer.model;
}
