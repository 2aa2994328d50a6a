// Supervised fine-tuning rows as TRL's SFTTrainer prepares them: conversations
// ({"messages": [...]}), prompts with completions (conversations or plain text)
// or plain text ({"text": ...}), rendered with the tokenizer's chat template and
// labelled: -100 where the loss does not count (TRL's assistant_only_loss and
// completion_only_loss), truncated to maxLength, then made next-token targets
// for cross_entropy and right-padded (a causal model never sees the padding).
import fs from 'node:fs';

import { firebrandError } from '../errors';
import { jsonLines } from '../io/json-lines';
import { parquetRowGroups } from '../io/parquet-file';
import { IGNORED, packedFields } from './sft-packing';
import type { TensorFields } from '../native';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';
import type { ChatMessage, HuggingFaceTokenizer } from './huggingface-tokenizer';

export interface SftOptions {
  /** Tokens per row at most (TRL's max_length). Default 1024. */
  maxLength?: number;
  /** Which end of a longer row is kept (TRL's truncation_mode): 'keep_start' (the default) or 'keep_end'. */
  truncation?: 'keep_start' | 'keep_end';
  /** The loss counts the assistant's messages only (TRL's assistant_only_loss). Default false. */
  assistantOnlyLoss?: boolean;
  /** The loss counts the completion only, in prompt/completion rows (TRL's completion_only_loss). Default true. */
  completionOnlyLoss?: boolean;
  /** The field of plain-text rows (TRL's dataset_text_field). Default 'text'. */
  textField?: string;
  /**
   * Several rows per sequence of maxLength tokens (TRL's packing, best-fit decreasing), with
   * `position_ids` restarting at each row so that a model built with fromPretrained's positionIds keeps
   * them apart (each row attends to itself only), instead of `attention_mask`. Default false.
   */
  packing?: boolean;
}

const SFT_OPTION_KEYS = optionKeys<SftOptions>()([
  'maxLength',
  'truncation',
  'assistantOnlyLoss',
  'completionOnlyLoss',
  'textField',
  'packing',
]);

/** `options` with their defaults, each checked: errors name the option. */
export function resolveSftOptions(options: SftOptions): Required<SftOptions> {
  refuseUnknownKeys(options, SFT_OPTION_KEYS, 'Dataset.fromSft options');
  const resolved: Required<SftOptions> = {
    maxLength: 1024,
    truncation: 'keep_start',
    assistantOnlyLoss: false,
    completionOnlyLoss: true,
    textField: 'text',
    packing: false,
    ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)),
  };
  const fail = (name: string, expected: string) =>
    firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `Dataset.fromSft options: ${name} must be ${expected}, got ${JSON.stringify(resolved[name as keyof SftOptions])}`,
    );
  if (!Number.isInteger(resolved.maxLength) || resolved.maxLength < 2) throw fail('maxLength', 'an integer >= 2');
  if (!['keep_start', 'keep_end'].includes(resolved.truncation)) throw fail('truncation', "'keep_start' or 'keep_end'");
  for (const name of ['assistantOnlyLoss', 'completionOnlyLoss', 'packing'] as const) {
    if (typeof resolved[name] !== 'boolean') throw fail(name, 'true or false');
  }
  if (typeof resolved.textField !== 'string') throw fail('textField', 'a field name');
  return resolved;
}

/** A row: { messages }, { prompt, completion } (both conversations or both text), or { text }. */
export type SftRow = Record<string, unknown>;

/** A row's ids, and which of them the loss counts as targets. */
interface LabelledRow {
  ids: ArrayLike<number>;
  counted: (i: number) => boolean;
}

function rowError(where: string, message: string): Error {
  return firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `${where}: ${message}`);
}

/** `value` as a conversation: an array of { role, content } with string content. */
function conversation(value: unknown, where: string): ChatMessage[] {
  if (!Array.isArray(value)) throw rowError(where, `expected an array of { role, content } messages`);
  value.forEach((message: { role?: unknown; content?: unknown }, i) => {
    if (typeof message?.role !== 'string' || typeof message?.content !== 'string') {
      throw rowError(`${where}[${i}]`, `expected { role: string, content: string }, got ${JSON.stringify(message)}`);
    }
  });
  return value as ChatMessage[];
}

/**
 * The rows of files one after another, each a JSON Lines file (one object a line; blank lines skipped), a JSON array, or a Parquet
 * file (a Hugging Face dataset's shard: `messages` as a list of structs, `prompt`/`completion`, `text`).
 */
export async function readRows(files: string[]): Promise<SftRow[]> {
  const rows: SftRow[] = [];
  for (const file of files) {
    if (/\.parquet$/i.test(file)) {
      for await (const group of parquetRowGroups(file)) rows.push(...(group.rows as SftRow[]));
    } else {
      rows.push(...(await readJsonRows(file)));
    }
  }
  return rows;
}

/** The rows of a JSON Lines file (one object a line; blank lines skipped; streamed) or of a JSON array. */
async function readJsonRows(file: string): Promise<SftRow[]> {
  if (/\.json$/i.test(file)) {
    const rows: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (!Array.isArray(rows)) throw rowError(file, 'expected a JSON array of rows (or a .jsonl file)');
    return rows as SftRow[];
  }
  const rows: SftRow[] = [];
  for await (const { value } of jsonLines(file)) rows.push(value as SftRow);
  return rows;
}

const withEos = (text: string, eos: string | undefined) =>
  eos === undefined || text.endsWith(eos) ? text : text + eos;

/** One row's ids and counted targets, as TRL's tokenize_fn and build_labels make them. */
function labelled(row: SftRow, where: string, tokenizer: HuggingFaceTokenizer, options: Required<SftOptions>) {
  const eos = tokenizer.specialTokens.eos;
  const all = () => true;
  if ('messages' in row) {
    const messages = conversation(row.messages, `${where}.messages`);
    if (!options.assistantOnlyLoss) return { ids: tokenizer.applyChatTemplate(messages), counted: all };
    const { ids, assistantMask } = tokenizer.chatTokensWithMask(messages, where);
    return { ids, counted: (i: number) => assistantMask[i] === 1 };
  }
  if ('prompt' in row && 'completion' in row) {
    const chat = Array.isArray(row.prompt);
    let promptIds: ArrayLike<number>;
    let full: LabelledRow;
    if (chat) {
      const prompt = conversation(row.prompt, `${where}.prompt`);
      const messages = [...prompt, ...conversation(row.completion, `${where}.completion`)];
      promptIds = tokenizer.applyChatTemplate(prompt, { addGenerationPrompt: true });
      full = options.assistantOnlyLoss
        ? ((mask) => ({ ids: mask.ids, counted: (i: number) => mask.assistantMask[i] === 1 }))(
            tokenizer.chatTokensWithMask(messages, where),
          )
        : { ids: tokenizer.applyChatTemplate(messages), counted: all };
    } else {
      if (typeof row.prompt !== 'string' || typeof row.completion !== 'string') {
        throw rowError(where, 'expected prompt and completion both conversations (arrays) or both strings');
      }
      promptIds = tokenizer.encode(row.prompt);
      full = { ids: tokenizer.encode(row.prompt + withEos(row.completion, eos)), counted: all };
    }
    if (Array.from(promptIds).some((id, i) => id !== full.ids[i])) {
      throw rowError(
        where,
        "the prompt's tokens are not the first tokens of prompt and completion together, so the completion cannot be told apart",
      );
    }
    const completionOnly = options.completionOnlyLoss;
    return { ids: full.ids, counted: (i: number) => full.counted(i) && (!completionOnly || i >= promptIds.length) };
  }
  const text = row[options.textField];
  if (typeof text !== 'string') {
    throw rowError(
      where,
      `expected { messages }, { prompt, completion } or { ${options.textField}: string }, got the fields ${JSON.stringify(Object.keys(row))}`,
    );
  }
  return { ids: tokenizer.encode(withEos(text, eos)), counted: all };
}

/**
 * The rows as training fields: `input_ids` (and the same as `input`), `attention_mask`, and `target`,
 * the next token where the loss counts it and -100 elsewhere; every row right-padded to the longest (or,
 * with packing, packed rows with `position_ids`). `dropped`: the rows left with no counted target (after
 * truncation), by index.
 */
export function sftFields(
  rows: SftRow[],
  tokenizer: HuggingFaceTokenizer,
  options: Required<SftOptions>,
  source: string,
): { fields: TensorFields; dropped: number[] } {
  const kept: { ids: number[]; targets: number[] }[] = [];
  const dropped: number[] = [];
  rows.forEach((row, index) => {
    const where = `${source}, row ${index}`;
    if (typeof row !== 'object' || row === null || Array.isArray(row)) throw rowError(where, 'expected an object');
    const { ids, counted } = labelled(row, where, tokenizer, options);
    const labels = Array.from(ids, (id, i) => (counted(i) ? id : IGNORED));
    const keep = options.truncation === 'keep_end' ? labels.length - options.maxLength : 0;
    const start = Math.max(0, keep);
    const inputs = Array.from(ids).slice(start, start + options.maxLength);
    // Position t predicts the token at t + 1 (transformers shifts labels the same way inside its models).
    const targets = [...labels.slice(start + 1, start + inputs.length), IGNORED];
    if (targets.every((target) => target === IGNORED)) dropped.push(index);
    else kept.push({ ids: inputs, targets });
  });
  if (kept.length === 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${source}: no row has a target the loss counts (${rows.length} rows, all dropped)`,
    );
  }
  const pad = tokenizer.specialTokenId('pad') ?? tokenizer.specialTokenId('eos') ?? 0;
  if (options.packing) return { fields: packedFields(kept, options.maxLength, pad), dropped };
  const length = Math.max(...kept.map((row) => row.ids.length));
  const ids = new Int32Array(kept.length * length).fill(pad);
  const mask = new Int32Array(kept.length * length);
  const targets = new Int32Array(kept.length * length).fill(IGNORED);
  kept.forEach((row, i) => {
    ids.set(row.ids, i * length);
    mask.fill(1, i * length, i * length + row.ids.length);
    targets.set(row.targets, i * length);
  });
  const shape = [kept.length, length];
  const fields: TensorFields = {
    input: { data: ids, shape },
    input_ids: { data: ids, shape },
    attention_mask: { data: mask, shape },
    target: { data: targets, shape },
  };
  return { fields, dropped };
}

/**
 * Dataset.fromSft's fields: the rows of `source` (files, or rows in memory) labelled and padded (or packed),
 * rows with no counted target dropped with a warning (FIREBRAND_SFT_DROPPED_ROWS).
 */
export async function sftDatasetFields(
  source: string | string[] | SftRow[],
  tokenizer: HuggingFaceTokenizer,
  options: SftOptions,
): Promise<TensorFields> {
  const resolved = resolveSftOptions(options);
  const files = typeof source === 'string' ? [source] : source.every((item) => typeof item === 'string') ? source : [];
  const rows = files.length > 0 ? await readRows(files as string[]) : (source as SftRow[]);
  const name = files.length > 0 ? files.join(', ') : 'rows';
  const { fields, dropped } = sftFields(rows, tokenizer, resolved, name);
  if (dropped.length > 0) {
    process.emitWarning(
      `Dataset.fromSft(${name}): ${dropped.length} of ${rows.length} rows have no target the loss counts (after truncation to ${resolved.maxLength} tokens) and were dropped: rows ${dropped.slice(0, 10).join(', ')}${dropped.length > 10 ? ', ...' : ''}`,
      { code: 'FIREBRAND_SFT_DROPPED_ROWS' },
    );
  }
  return fields;
}
