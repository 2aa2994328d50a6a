// Hugging Face checkpoint folders read as transformers' from_pretrained reads
// them: config.json's model_type picks the architecture, model.safetensors or
// the shards model.safetensors.index.json maps hold the weights (loaded by the
// trainer when it builds the model), generation_config.json holds generate's
// defaults.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { readJsonObject } from '../io/json-file';
import type { Module } from '../nn/module/module';
import { GPT2LMHeadModel, type GPT2Config } from './architectures/gpt2';
import { LlamaForCausalLM, type LlamaConfig } from './architectures/llama';
import { hubSnapshot, isHubId, type HubOptions } from './hub-download';

export const CONFIG_FILE = 'config.json';
export const SAFETENSORS_FILE = 'model.safetensors';
export const SAFETENSORS_INDEX_FILE = 'model.safetensors.index.json';
export const GENERATION_CONFIG_FILE = 'generation_config.json';

/** config.json as transformers writes it: model_type picks the architecture, the rest is its own. */
export type PretrainedConfig = { model_type: string } & Record<string, unknown>;

/** The architectures by config.json's model_type. */
const ARCHITECTURES: Record<string, (config: PretrainedConfig) => Module> = {
  gpt2: (config) => new GPT2LMHeadModel(config as unknown as GPT2Config),
  llama: (config) => new LlamaForCausalLM(config as unknown as LlamaConfig),
  qwen2: (config) => new LlamaForCausalLM(config as unknown as LlamaConfig),
  mistral: (config) => new LlamaForCausalLM(config as unknown as LlamaConfig),
};

/** What fromPretrained read besides the model: its folder, config and generation defaults. */
export interface PretrainedSource {
  folder: string;
  config: PretrainedConfig;
  generationConfig?: Record<string, unknown>;
  /** The safetensors files that hold the weights (several for a sharded checkpoint). */
  weightFiles: string[];
}

const sources = new WeakMap<Module, PretrainedSource>();

/**
 * The tokens generation stops after by default for a checkpoint: generation_config.json's eos_token_id
 * (one or a list), else config.json's, as transformers' generate stops.
 */
export function pretrainedStopTokens(source: PretrainedSource | undefined): number[] | undefined {
  const eos = source?.generationConfig?.eos_token_id ?? source?.config.eos_token_id;
  const ids = [eos].flat().filter((id): id is number => typeof id === 'number');
  return ids.length > 0 ? ids : undefined;
}

/** @internal Where `model`'s weights come from, when fromPretrained made it. */
export function pretrainedSourceOf(model: unknown): PretrainedSource | undefined {
  return typeof model === 'object' && model !== null ? sources.get(model as Module) : undefined;
}

/** The weight files of `folder`: model.safetensors, or every shard its index names (in order, once each). */
function weightFilesOf(folder: string): string[] {
  const index = path.join(folder, SAFETENSORS_INDEX_FILE);
  if (fs.existsSync(index)) {
    const weightMap = readJsonObject(index, 'fromPretrained').weight_map;
    if (typeof weightMap !== 'object' || weightMap === null) {
      throw firebrandError('ERR_FIREBRAND_FILE', `fromPretrained: ${index} has no weight_map`);
    }
    const shards = [...new Set(Object.values(weightMap as Record<string, string>))];
    for (const shard of shards) {
      if (typeof shard !== 'string' || path.basename(shard) !== shard) {
        throw firebrandError(
          'ERR_FIREBRAND_FILE',
          `fromPretrained: ${index} names shard ${JSON.stringify(shard)}, expected a file name in its folder`,
        );
      }
    }
    return shards.map((shard) => path.join(folder, shard));
  }
  const single = path.join(folder, SAFETENSORS_FILE);
  if (fs.existsSync(single)) return [single];
  throw firebrandError(
    'ERR_FIREBRAND_FILE',
    `fromPretrained: ${folder} has neither ${SAFETENSORS_FILE} nor ${SAFETENSORS_INDEX_FILE}`,
  );
}

/**
 * The model of a Hugging Face checkpoint, as an ordinary module (read it, subclass it, give it a new
 * head): `source` is a folder as save_pretrained writes it, or a hub id ('org/name') downloaded into
 * Hugging Face's cache (hub-download.ts). A trainer given the model loads the checkpoint's weights
 * when it sets up, strictly: every weight must be in the files with its shape. `model.config` is
 * config.json's object.
 */
export async function fromPretrained(
  source: string,
  options: HubOptions = {},
): Promise<Module & { config: PretrainedConfig }> {
  const folder = isHubId(source) ? await hubSnapshot(source, options) : source;
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
    throw firebrandError('ERR_FIREBRAND_FILE', `fromPretrained: ${folder} is not a folder (nor a hub id 'org/name')`);
  }
  const config = readJsonObject(path.join(folder, CONFIG_FILE), 'fromPretrained');
  const modelType = config.model_type;
  const make = typeof modelType === 'string' ? ARCHITECTURES[modelType] : undefined;
  if (make === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `fromPretrained: ${path.join(folder, CONFIG_FILE)} has model_type ${JSON.stringify(modelType)}; supported: ${Object.keys(ARCHITECTURES).join(', ')}`,
    );
  }
  const model = make(config as PretrainedConfig) as Module & { config: PretrainedConfig };
  const generationFile = path.join(folder, GENERATION_CONFIG_FILE);
  sources.set(model, {
    folder,
    config: config as PretrainedConfig,
    generationConfig: fs.existsSync(generationFile) ? readJsonObject(generationFile, 'fromPretrained') : undefined,
    weightFiles: weightFilesOf(folder),
  });
  return model;
}
