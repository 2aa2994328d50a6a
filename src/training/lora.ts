// LoRA as PEFT configures and stores it: the trainer's `lora` option
// (LoraConfig's r, lora_alpha, lora_dropout, target_modules), and the adapter
// folder PEFT's save_pretrained writes (adapter_model.safetensors, whose names
// C++ writes, and adapter_config.json, written and checked here).
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import type { ModelDescription } from '../native';
import { readJsonObject } from '../io/json-file';
import { resolveOptions } from '../options/schema';
import { boolean, either, field, integer, listOf, number, oneOf, Schema } from '../options/schema';
import { Layer, Module } from '../nn/module/module';

/** PEFT's LoraConfig, in camelCase. */
export interface LoraConfig {
  /** The adapters' rank. Default 8 (PEFT's). */
  r?: number;
  /** Scales the adapters' output by alpha / r. Default 8 (PEFT's lora_alpha). */
  alpha?: number;
  /** Dropout on each adapter's input while training. Default 0. */
  dropout?: number;
  /**
   * Linear layers to adapt: a module path, or its last parts ('c_attn' adapts every '….c_attn'), as PEFT's
   * target_modules; or 'all-linear': every linear layer but the output layer (a checkpoint's lm_head), as
   * PEFT's shorthand, which saveAdapter writes as the list of their paths.
   */
  targetModules: string[] | 'all-linear';
  /** Rank-stabilized LoRA: the adapters' output scaled by alpha / sqrt(r) (PEFT's use_rslora). Default false. */
  useRslora?: boolean;
  /**
   * DoRA (PEFT's use_dora): each adapted linear layer's rows rescaled to a trained magnitude over the norm
   * of W + scaling·BA (held constant in backward), the magnitude starting at the rows' norms. Default false.
   */
  useDora?: boolean;
  /**
   * Modules trained whole beside the adapters, named as targetModules are (a new head: ['score'] or
   * ['classifier']), as PEFT's modules_to_save; saveAdapter saves them whole. Default none.
   */
  modulesToSave?: string[];
}

const loraSchema: Schema = {
  r: field(integer(1), 8, [1, 16]),
  alpha: field(number(0, Infinity, true), 8, [1, 32]),
  dropout: field(number(0, 1), 0, [0, 0.1]),
  targetModules: field(either(listOf(), oneOf('all-linear')), undefined, [['c_attn'], 'all-linear']),
  useRslora: field(boolean, false, [false, true]),
  useDora: field(boolean, false, [false, true]),
  modulesToSave: field(listOf(), [], [[], ['classifier']]),
};

export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';
export const ADAPTER_CONFIG_FILE = 'adapter_config.json';

export type ResolvedLora = Required<LoraConfig>;

export function resolveLora(lora: LoraConfig): ResolvedLora {
  const resolved = resolveOptions(lora, loraSchema, 'lora') as unknown as ResolvedLora;
  if (resolved.targetModules === undefined || resolved.targetModules.length === 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      "lora.targetModules: name the linear layers to adapt (PEFT's target_modules), e.g. ['c_attn']",
    );
  }
  return resolved;
}

/**
 * The paths of `model`'s linear layers but its output layer (getOutputEmbeddings(), a checkpoint's lm_head):
 * what PEFT's target_modules 'all-linear' adapts.
 */
export function allLinearLayers(model: unknown): string[] {
  if (!(model instanceof Module)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      "lora.targetModules 'all-linear': the model must be written as modules (a Module), to find its linear layers",
    );
  }
  const output = (model as { getOutputEmbeddings?: () => Module }).getOutputEmbeddings?.();
  const paths = [...model.namedModules()]
    .filter(([, module]) => module instanceof Layer && module.spec.type === 'linear' && module !== output)
    .map(([path]) => path);
  if (paths.length === 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      "lora.targetModules 'all-linear': the model has no linear layer (nn.linear) besides its output layer",
    );
  }
  return paths;
}

/** The model an adapter is for: PEFT's base_model_name_or_path, and its task_type from the class name. */
export interface AdapterBase {
  name?: string;
  architecture?: string;
}

/** PEFT's TaskType of a transformers class, by its name's ending (null: none PEFT names). */
function taskTypeOf(architecture: string | undefined): string | null {
  const tasks: [RegExp, string][] = [
    [/ForCausalLM$/, 'CAUSAL_LM'],
    [/ForSequenceClassification$/, 'SEQ_CLS'],
    [/ForTokenClassification$/, 'TOKEN_CLS'],
    [/ForQuestionAnswering$/, 'QUESTION_ANS'],
  ];
  return tasks.find(([pattern]) => architecture !== undefined && pattern.test(architecture))?.[1] ?? null;
}

/** adapter_config.json as PEFT writes it for these options, naming the base model so that AutoPeftModel loads it. */
export function writeAdapterConfig(
  folder: string,
  lora: ResolvedLora,
  modulesToSave: string[],
  base: AdapterBase,
): void {
  const config = {
    peft_type: 'LORA',
    task_type: taskTypeOf(base.architecture),
    base_model_name_or_path: base.name ?? null,
    inference_mode: true,
    r: lora.r,
    lora_alpha: lora.alpha,
    lora_dropout: lora.dropout,
    target_modules: lora.targetModules,
    bias: 'none',
    fan_in_fan_out: false,
    init_lora_weights: true,
    use_rslora: lora.useRslora,
    use_dora: lora.useDora,
    modules_to_save: modulesToSave.length > 0 ? modulesToSave : null,
  };
  fs.writeFileSync(path.join(folder, ADAPTER_CONFIG_FILE), `${JSON.stringify(config, null, 2)}\n`);
}

/** LoraConfig fields that change what the adapters compute, each with what it asks for; firebrand takes their defaults. */
const UNSUPPORTED_LORA_VARIANTS: [string, string][] = [
  ['rank_pattern', 'a rank per module (rank_pattern)'],
  ['alpha_pattern', 'an alpha per module (alpha_pattern)'],
  ['bias', "trained biases of the base layers (bias other than 'none')"],
  ['lora_bias', 'a bias on lora_B (lora_bias)'],
];

const isEmptyObject = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

/** A folder's adapter_config.json, refused (naming the field) where it asks for what firebrand's LoRA does not compute. */
function readAdapterConfig(folder: string, operation: string): Record<string, unknown> {
  const file = path.join(folder, ADAPTER_CONFIG_FILE);
  const config = readJsonObject(file, operation);
  if (config.peft_type !== 'LORA') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${operation}: ${file} holds a ${String(config.peft_type)} adapter; only LoRA adapters load`,
    );
  }
  for (const [key, computes] of UNSUPPORTED_LORA_VARIANTS) {
    const value = config[key];
    const isDefault =
      value === undefined || value === null || value === false || value === 'none' || isEmptyObject(value);
    if (!isDefault) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${operation}: ${file} has ${key} ${JSON.stringify(value)}: ${computes}, which firebrand's LoRA does not compute`,
      );
    }
  }
  return config;
}

/** An adapter folder's LoRA options (PEFT's r, lora_alpha, lora_dropout, target_modules), to build a model that loads it. */
export function loraOfAdapter(folder: string, operation: string): ResolvedLora {
  const config = readAdapterConfig(folder, operation);
  const file = path.join(folder, ADAPTER_CONFIG_FILE);
  const targets = config.target_modules;
  const listed = Array.isArray(targets) && targets.every((target) => typeof target === 'string');
  if (!listed && targets !== 'all-linear') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${operation}: ${file} has target_modules ${JSON.stringify(targets)}; firebrand loads a list of module names (a regex string is not read)`,
    );
  }
  return resolveLora({
    r: config.r as number,
    alpha: config.lora_alpha as number,
    dropout: (config.lora_dropout as number | undefined) ?? 0,
    targetModules: targets as string[] | 'all-linear',
    useRslora: config.use_rslora === true,
    useDora: config.use_dora === true,
    modulesToSave: Array.isArray(config.modules_to_save) ? (config.modules_to_save as string[]) : [],
  });
}

/** The model an adapter folder was trained on (PEFT's base_model_name_or_path), when it names one. */
export function adapterBaseModel(folder: string, operation: string): string | undefined {
  const base = readAdapterConfig(folder, operation).base_model_name_or_path;
  return typeof base === 'string' && base !== '' ? base : undefined;
}

/** Checks a folder's adapter_config.json against the trainer's lora options: what differs is named. */
export function checkAdapterConfig(folder: string, lora: ResolvedLora): void {
  const file = path.join(folder, ADAPTER_CONFIG_FILE);
  const config = readAdapterConfig(folder, 'loadAdapter');
  for (const [key, ours] of [
    ['r', lora.r],
    ['lora_alpha', lora.alpha],
    ['use_rslora', lora.useRslora],
    ['use_dora', lora.useDora],
  ] as const) {
    if ((config[key] ?? (typeof ours === 'boolean' ? false : undefined)) !== ours) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `loadAdapter: ${file} has ${key} ${String(config[key])}, but this trainer's lora has ${ours}`,
      );
    }
  }
}

/**
 * Warns of adapters on a weight the model holds under two names (a head tied to the input embeddings,
 * tie_word_embeddings): mergeAdapter cannot fold them in without changing the other name's tensor too.
 */
export function warnOfTiedAdapters(model: ModelDescription): void {
  const adapted = model.parameters
    .filter(({ name }) => name.endsWith('.lora_A.weight'))
    .map(({ name }) => `${name.slice(0, -'.lora_A.weight'.length)}.weight`);
  for (const { name, source } of model.tied) {
    const weight = adapted.find((candidate) => candidate === name || candidate === source);
    if (weight === undefined) continue;
    process.emitWarning(
      `lora: the adapter on '${weight.slice(0, -'.weight'.length)}' adapts a weight tied to ` +
        `'${weight === name ? source : name}' (tie_word_embeddings): mergeAdapter will refuse it, since merging would ` +
        'change both; keep the adapter unmerged, or leave that module out of targetModules',
      { code: 'FIREBRAND_LORA_TIED_WEIGHT' },
    );
  }
}
