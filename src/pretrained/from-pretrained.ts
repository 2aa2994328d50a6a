// Hugging Face checkpoint folders read as transformers' from_pretrained reads
// them: config.json's model_type picks the architecture, model.safetensors or
// the shards model.safetensors.index.json maps hold the weights (loaded by the
// trainer when it builds the model), generation_config.json holds generate's
// defaults.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { readJsonObject } from '../io/json-file';
import { refuseUnknownKeys } from '../options/option-keys';
import { MODULE_DTYPES, type Module, type ModuleDtype } from '../nn/module/module';
import { BertForMaskedLM, BertForSequenceClassification, type BertConfig } from './architectures/bert';
import { GPT2LMHeadModel, type GPT2Config } from './architectures/gpt2';
import { LlamaForCausalLM, type LlamaConfig } from './architectures/llama';
import { ViTForImageClassification, type ViTConfig } from './architectures/vit';
import { hubSnapshot, isHubId, type HubOptions } from './hub-download';

export const CONFIG_FILE = 'config.json';
export const SAFETENSORS_FILE = 'model.safetensors';
export const SAFETENSORS_INDEX_FILE = 'model.safetensors.index.json';
export const GENERATION_CONFIG_FILE = 'generation_config.json';

/** config.json as transformers writes it: model_type picks the architecture, the rest is its own. */
export type PretrainedConfig = { model_type: string } & Record<string, unknown>;

type Architecture = (config: PretrainedConfig, options: FromPretrainedOptions) => Module;
const llama: Architecture = (config, options) =>
  new LlamaForCausalLM(config as unknown as LlamaConfig, {
    attentionMask: options.attentionMask,
    positionIds: options.positionIds,
  });

/**
 * The architectures by config.json's model_type, then by class name (config.json's architectures[0]
 * picks one, else the first).
 */
const ARCHITECTURES: Record<string, Record<string, Architecture>> = {
  gpt2: { GPT2LMHeadModel: (config) => new GPT2LMHeadModel(config as unknown as GPT2Config) },
  llama: { LlamaForCausalLM: llama },
  qwen2: { Qwen2ForCausalLM: llama },
  mistral: { MistralForCausalLM: llama },
  bert: {
    BertForMaskedLM: (config) => new BertForMaskedLM(config as unknown as BertConfig),
    BertForSequenceClassification: (config) => new BertForSequenceClassification(config as unknown as BertConfig),
  },
  vit: { ViTForImageClassification: (config) => new ViTForImageClassification(config as unknown as ViTConfig) },
};

export interface FromPretrainedOptions extends HubOptions {
  /**
   * The class to build, when it is not the checkpoint's own (config.json's architectures[0]): a BERT
   * pretrained as BertForMaskedLM fine-tuned as 'BertForSequenceClassification'. As transformers does,
   * the new head's weights are initialized afresh (and named in a warning), and the checkpoint's weights
   * the class lacks (the old head's) are left out.
   */
  architecture?: string;
  /** The classes of a classification head (config.json's id2label becomes LABEL_0 .. LABEL_{n-1}). */
  numLabels?: number;
  /** A causal LM (the Llama family) takes { input_ids, attention_mask } by name: a padded batch. */
  attentionMask?: boolean;
  /**
   * A causal LM (the Llama family) takes { input_ids, position_ids }: packed sequences (Dataset.fromSft's
   * packing), each document's positions from 0 and its attention kept to itself, as transformers does.
   */
  positionIds?: boolean;
  /**
   * The dtype of the model's weights (model.to(dtype) after it is built): 'float32' (the default, as
   * PyTorch builds modules and as training wants), 'bfloat16', 'float16', or 'auto' for config.json's
   * dtype (torch_dtype in older files; float32 where it names none), as transformers 5 defaults to.
   */
  dtype?: ModuleDtype | 'auto';
  /**
   * 'int8': once loaded, every linear layer's weight becomes int8 with a float scale per output row
   * (symmetric, max |w| / 127), as transformers' load_in_8bit and torchao's int8 weight-only do; the
   * output head (lm_head) and tied weights keep `dtype`. Quantized weights are frozen: train LoRA
   * adapters on them (QLoRA-style), or predict and generate. Decoding reads a quarter of float32's bytes.
   */
  quantize?: 'int8';
}

export const FROM_PRETRAINED_OPTIONS = [
  'revision',
  'architecture',
  'numLabels',
  'attentionMask',
  'positionIds',
  'dtype',
  'quantize',
];

/** What fromPretrained read besides the model: its folder, config and generation defaults. */
export interface PretrainedSource {
  folder: string;
  /** What fromPretrained was given: a hub id, or the folder's absolute path (PEFT's base_model_name_or_path). */
  name?: string;
  config: PretrainedConfig;
  generationConfig?: Record<string, unknown>;
  /** The safetensors files that hold the weights (several for a sharded checkpoint). */
  weightFiles: string[];
  /** The class built is not the checkpoint's own: its new weights are initialized, the old head's left out. */
  newHead: boolean;
  /** The model's modules by path when it was made: one replaced since (a new head) keeps its own weights. */
  modules: Map<string, Module>;
  /** fromPretrained's quantize: the linear layers become int8 once their weights are loaded. */
  quantize?: 'int8';
}

const sources = new WeakMap<Module, PretrainedSource>();

/** @internal Records where `model`'s weights come from; a trainer given it loads them when it sets up. */
export function setPretrainedSource(model: Module, source: Omit<PretrainedSource, 'modules'>): void {
  sources.set(model, { ...source, modules: new Map(model.namedModules()) });
}

/** @internal Where `model`'s weights come from, when fromPretrained made it. */
export function pretrainedSourceOf(model: unknown): PretrainedSource | undefined {
  return typeof model === 'object' && model !== null ? sources.get(model as Module) : undefined;
}

/**
 * @internal The pretrained modules inside `model` (itself, or a backbone a user's module holds), each
 * with its path ('' for the model itself): their weights load under that path.
 */
export function pretrainedSourcesIn(model: unknown): { path: string; module: Module; source: PretrainedSource }[] {
  if (!(model instanceof Object) || typeof (model as Module).namedModules !== 'function') return [];
  const found: { path: string; module: Module; source: PretrainedSource }[] = [];
  for (const [path, module] of (model as Module).namedModules()) {
    const source = sources.get(module);
    if (source !== undefined && !found.some((outer) => path.startsWith(`${outer.path}.`))) {
      found.push({ path, module, source });
    }
  }
  return found;
}

/** @internal Whether `source` is a Hugging Face checkpoint (with a config.json savePretrained can write). */
export function isHuggingFaceSource(source: PretrainedSource): boolean {
  return typeof source.config.model_type === 'string' && source.config.model_type in ARCHITECTURES;
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
  options: FromPretrainedOptions = {},
): Promise<Module & { config: PretrainedConfig }> {
  refuseUnknownKeys(options, FROM_PRETRAINED_OPTIONS, 'fromPretrained options');
  if (options.quantize !== undefined && options.quantize !== 'int8') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `fromPretrained.quantize: expected 'int8' (or no quantize), got ${JSON.stringify(options.quantize)}`,
    );
  }
  const folder = isHubId(source) ? await hubSnapshot(source, options) : source;
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
    throw firebrandError('ERR_FIREBRAND_FILE', `fromPretrained: ${folder} is not a folder (nor a hub id 'org/name')`);
  }
  const configFile = path.join(folder, CONFIG_FILE);
  const config = withLabels(readJsonObject(configFile, 'fromPretrained') as PretrainedConfig, options.numLabels);
  const { architecture, make, newHead } = architectureOf(config, configFile, options.architecture);
  for (const option of ['attentionMask', 'positionIds'] as const) {
    if (options[option] && make !== llama) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `fromPretrained.${option}: ${architecture} does not take it (the Llama family does; BERT always takes its mask)`,
      );
    }
  }
  const model = make(config, options) as Module & { config: PretrainedConfig };
  const dtype = weightsDtype(options.dtype, config, configFile);
  if (dtype !== 'float32') model.to(dtype);
  const generationFile = path.join(folder, GENERATION_CONFIG_FILE);
  setPretrainedSource(model, {
    folder,
    name: isHubId(source) ? source : path.resolve(folder),
    config: { ...config, architectures: [architecture] },
    generationConfig: fs.existsSync(generationFile) ? readJsonObject(generationFile, 'fromPretrained') : undefined,
    weightFiles: weightFilesOf(folder),
    newHead,
    quantize: options.quantize,
  });
  return model;
}

/** The dtype fromPretrained's `dtype` asks for ('auto': config.json's). */
function weightsDtype(requested: unknown, config: PretrainedConfig, configFile: string): ModuleDtype {
  if (requested === undefined) return 'float32';
  if (requested === 'auto') {
    const own = config.dtype ?? config.torch_dtype ?? 'float32';
    if (typeof own !== 'string' || !(MODULE_DTYPES as readonly string[]).includes(own)) {
      throw firebrandError(
        'ERR_FIREBRAND_FILE',
        `fromPretrained: ${configFile} has dtype ${JSON.stringify(own)}; dtype 'auto' takes ${MODULE_DTYPES.join(', ')}`,
      );
    }
    return own as ModuleDtype;
  }
  if (typeof requested !== 'string' || !(MODULE_DTYPES as readonly string[]).includes(requested)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `fromPretrained.dtype: expected one of ${MODULE_DTYPES.join(', ')} or 'auto', got ${JSON.stringify(requested)}`,
    );
  }
  return requested as ModuleDtype;
}

/**
 * The class to build: `requested`, else config.json's architectures[0], else the model_type's first;
 * newHead when it is not the checkpoint's own class.
 */
function architectureOf(
  config: PretrainedConfig,
  configFile: string,
  requested: string | undefined,
): { architecture: string; make: Architecture; newHead: boolean } {
  const classes = typeof config.model_type === 'string' ? ARCHITECTURES[config.model_type] : undefined;
  if (classes === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `fromPretrained: ${configFile} has model_type ${JSON.stringify(config.model_type)}; supported: ${Object.keys(ARCHITECTURES).join(', ')}`,
    );
  }
  const own = Array.isArray(config.architectures) ? config.architectures[0] : undefined;
  const name = requested ?? (typeof own === 'string' && own in classes ? own : Object.keys(classes)[0]);
  if (!(name in classes)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `fromPretrained: architecture '${name}' is not one of model_type '${config.model_type}''s: ${Object.keys(classes).join(', ')}`,
    );
  }
  return { architecture: name, make: classes[name], newHead: own !== undefined && own !== name };
}

/** Whether the checkpoint in `folder` builds a model that takes fromPretrained's attentionMask (the Llama family). */
export function takesAttentionMask(folder: string): boolean {
  const configFile = path.join(folder, CONFIG_FILE);
  return (
    architectureOf(readJsonObject(configFile, 'fromPretrained') as PretrainedConfig, configFile, undefined).make ===
    llama
  );
}

/** config with numLabels classes named as transformers names them (LABEL_0, ...), when given. */
function withLabels(config: PretrainedConfig, numLabels: number | undefined): PretrainedConfig {
  if (numLabels === undefined) return config;
  if (!Number.isInteger(numLabels) || numLabels < 1) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `fromPretrained.numLabels: got ${numLabels}, expected an integer >= 1`,
    );
  }
  const labels = Array.from({ length: numLabels }, (_, i) => `LABEL_${i}`);
  return {
    ...config,
    id2label: Object.fromEntries(labels.map((label, i) => [String(i), label])),
    label2id: Object.fromEntries(labels.map((label, i) => [label, i])),
  };
}
