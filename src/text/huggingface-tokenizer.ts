// A pretrained model's tokenizer.json (BPE as GPT-2, Llama and Qwen ship it;
// WordPiece and Unigram too), run by Hugging Face's tokenizers.js
// (@huggingface/tokenizers): pure JavaScript, no second native binary to match
// to the platform, and the same ids as the Rust `tokenizers` that wrote the file
// (test/bpe-tokenizer.test.ts checks both BPE layouts against it).
import { Tokenizer as TokenizersJs } from '@huggingface/tokenizers';
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { readJsonObject } from '../io/json-file';
import { hubSnapshot, isHubId, type HubOptions } from '../pretrained/hub-download';
import { refuseUnknownKeys } from '../options/option-keys';
import {
  CHAT_TEMPLATE_OPTION_KEYS,
  type ChatMessage,
  type ChatTemplateOptions,
  GENERATION_END,
  GENERATION_START,
  markedGenerations,
  renderChatTemplate,
} from './chat-template';
import type { Tokenizer } from './tokenizer';

export type { ChatContentPart, ChatMessage, ChatTemplateOptions } from './chat-template';

type Json = Record<string, unknown>;

export interface EncodeOptions {
  /** Add the tokens the tokenizer's post-processor adds (Llama's <s>), as Hugging Face does by default. Default true. */
  addSpecialTokens?: boolean;
}

export interface DecodeOptions {
  /** Leave special tokens (<s>, <|endoftext|>) out of the text. Default false. */
  skipSpecialTokens?: boolean;
}

const readJson = (file: string, owner: string): Json => readJsonObject(file, owner, "a tokenizer's JSON");

/** A conversation's ids and which of them are the assistant's (transformers' assistant_masks). */
export interface ChatTokens {
  ids: Int32Array;
  /** 1 for the assistant's tokens, 0 for the rest. */
  assistantMask: Uint8Array;
}

/** The special tokens tokenizer_config.json names (bos_token, eos_token, ...), as text. */
export type SpecialTokens = Partial<Record<'bos' | 'eos' | 'unk' | 'pad', string>>;

const SPECIAL_TOKEN_FIELDS = ['bos', 'eos', 'unk', 'pad'] as const;

/** tokenizer_config.json's special tokens: strings, or AddedToken objects ({ content }). */
function specialTokensOf(config: Json): SpecialTokens {
  const tokens: SpecialTokens = {};
  for (const name of SPECIAL_TOKEN_FIELDS) {
    const value = config[`${name}_token`];
    const text = typeof value === 'string' ? value : (value as { content?: unknown } | null)?.content;
    if (typeof text === 'string') tokens[name] = text;
  }
  return tokens;
}

/** The default chat template: chat_template.jinja beside the config (transformers 5), or the config's own. */
function chatTemplateOf(config: Json, folder: string | undefined): string | undefined {
  const file = folder === undefined ? undefined : path.join(folder, 'chat_template.jinja');
  if (file !== undefined && fs.existsSync(file)) return fs.readFileSync(file, 'utf8');
  const template = config.chat_template;
  if (typeof template === 'string') return template;
  if (Array.isArray(template)) {
    const named = template.find((entry: { name?: string }) => entry?.name === 'default') as
      { template?: string } | undefined;
    return named?.template;
  }
  return undefined;
}

export class HuggingFaceTokenizer implements Tokenizer {
  /** Ids run from 0 to vocabSize - 1, added tokens included. */
  readonly vocabSize: number;
  /** The special tokens tokenizer_config.json names. */
  readonly specialTokens: SpecialTokens;
  /** The chat template (Jinja) the checkpoint ships, if any. */
  readonly chatTemplate?: string;

  private constructor(
    private readonly tokenizer: TokenizersJs,
    private readonly json: Json,
    config: Json,
    folder?: string,
  ) {
    const vocabulary = tokenizer.get_vocab(true);
    this.vocabSize = vocabulary.size === 0 ? 0 : Math.max(...vocabulary.values()) + 1;
    this.specialTokens = specialTokensOf(config);
    this.chatTemplate = chatTemplateOf(config, folder);
  }

  /**
   * The tokenizer of a Hugging Face checkpoint: a folder with tokenizer.json (and tokenizer_config.json,
   * chat_template.jinja), or a hub id downloaded as fromPretrained downloads it.
   */
  static async fromPretrained(source: string, options: HubOptions = {}): Promise<HuggingFaceTokenizer> {
    const folder = isHubId(source) ? await hubSnapshot(source, options) : source;
    if (!fs.existsSync(path.join(folder, 'tokenizer.json'))) {
      throw firebrandError(
        'ERR_FIREBRAND_FILE',
        `HuggingFaceTokenizer.fromPretrained: ${folder} has no tokenizer.json; a checkpoint's tokenizer is its tokenizer.json, with tokenizer_config.json for special tokens and the chat template`,
      );
    }
    return HuggingFaceTokenizer.fromFile(folder);
  }

  /** The id of a special token ('bos', 'eos', ...), or undefined when the tokenizer has none. */
  specialTokenId(name: keyof SpecialTokens): number | undefined {
    const token = this.specialTokens[name];
    return token === undefined ? undefined : this.tokenToId(token);
  }

  /**
   * Messages as the checkpoint's chat template writes them (transformers' apply_chat_template), with
   * its special tokens (bos_token, eos_token, ...) in scope: the text, or with `tokenize` its ids
   * (encoded without adding special tokens again, as transformers does).
   */
  applyChatTemplate(messages: ChatMessage[], options?: ChatTemplateOptions & { tokenize?: true }): Int32Array;
  applyChatTemplate(messages: ChatMessage[], options: ChatTemplateOptions & { tokenize: false }): string;
  applyChatTemplate(
    messages: ChatMessage[],
    options: ChatTemplateOptions & { tokenize?: boolean } = {},
  ): Int32Array | string {
    refuseUnknownKeys(options, CHAT_TEMPLATE_OPTION_KEYS, 'applyChatTemplate options');
    const { addGenerationPrompt = false, tokenize = true, chatTemplate = this.chatTemplate, ...rendering } = options;
    if (chatTemplate === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        'HuggingFaceTokenizer.applyChatTemplate: the tokenizer has no chat template (chat_template in tokenizer_config.json or chat_template.jinja)',
      );
    }
    const text = this.renderChat(chatTemplate, messages, addGenerationPrompt, rendering);
    return tokenize ? this.encode(text, { addSpecialTokens: false }) : text;
  }

  /**
   * A conversation's ids (as applyChatTemplate gives them) with the assistant's tokens marked, as
   * transformers' apply_chat_template(return_assistant_tokens_mask=True) does: from the template's
   * {% generation %} blocks when it has them; otherwise each assistant message's tokens are those after
   * the conversation before it with the generation prompt and through its own end (its end-of-turn
   * tokens included). `where` names the conversation in errors.
   */
  chatTokensWithMask(messages: ChatMessage[], where = 'the conversation'): ChatTokens {
    const template = this.chatTemplate;
    if (template === undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_STATE', `${where}: the tokenizer has no chat template`);
    }
    const spans: [number, number][] = [];
    let text: string;
    if (/{%-?\s*generation\s*-?%}/.test(template)) {
      const marked = this.renderChat(markedGenerations(template), messages, false);
      text = '';
      for (const piece of marked.split(new RegExp(`(${GENERATION_START}|${GENERATION_END})`))) {
        if (piece === GENERATION_START) spans.push([text.length, text.length]);
        else if (piece === GENERATION_END) spans[spans.length - 1][1] = text.length;
        else text += piece;
      }
    } else {
      text = this.renderChat(template, messages, false);
      messages.forEach((message, i) => {
        if (message.role !== 'assistant') return;
        const before = this.renderChat(template, messages.slice(0, i), true);
        const through = this.renderChat(template, messages.slice(0, i + 1), false);
        if (!through.startsWith(before) || !text.startsWith(through)) {
          throw firebrandError(
            'ERR_FIREBRAND_INVALID_ARGUMENT',
            `${where}: message ${i} (assistant): the chat template does not render the conversation before it as a prefix of the whole, so its tokens cannot be told apart; a template with {% generation %} blocks marks them`,
          );
        }
        spans.push([before.length, through.length]);
      });
    }
    return this.maskedTokens(text, spans);
  }

  /**
   * `text`'s ids with the tokens of the character `spans` marked as transformers marks them: from the
   * token that holds a span's first character through the first token that holds its last one
   * (char_to_token). The token holding character c is the first where the ids of text[:c] and of the
   * whole part (tokenizers.js gives no offsets).
   */
  private maskedTokens(text: string, spans: [number, number][]): ChatTokens {
    const ids = this.encode(text, { addSpecialTokens: false });
    const assistantMask = new Uint8Array(ids.length);
    const tokenHolding = (char: number) => {
      const before = this.encode(text.slice(0, char), { addSpecialTokens: false });
      let shared = 0;
      while (shared < before.length && before[shared] === ids[shared]) ++shared;
      return shared;
    };
    for (const [start, end] of spans) {
      if (end > start) assistantMask.fill(1, tokenHolding(start), tokenHolding(end - 1) + 1);
    }
    return { ids, assistantMask };
  }

  /** `template` rendered for `messages`, with the special tokens (bos_token, eos_token, ...) in scope. */
  private renderChat(
    template: string,
    messages: ChatMessage[],
    addGenerationPrompt: boolean,
    options: ChatTemplateOptions = {},
  ): string {
    const specialTokens: Record<string, string> = {};
    for (const name of SPECIAL_TOKEN_FIELDS) specialTokens[`${name}_token`] = this.specialTokens[name] ?? '';
    return renderChatTemplate(template, messages, specialTokens, { ...options, addGenerationPrompt });
  }

  /**
   * A tokenizer.json, as a pretrained model ships it (or `tokenizers` saves it), or the folder that holds
   * it; a tokenizer_config.json beside it is read too (it may set clean_up_tokenization_spaces).
   */
  static fromFile(file: string): HuggingFaceTokenizer {
    const tokenizerFile =
      fs.existsSync(file) && fs.statSync(file).isDirectory() ? path.join(file, 'tokenizer.json') : file;
    const configFile = path.join(path.dirname(tokenizerFile), 'tokenizer_config.json');
    const config = fs.existsSync(configFile) ? readJson(configFile, 'HuggingFaceTokenizer.fromFile') : {};
    return HuggingFaceTokenizer.fromJSON(
      readJson(tokenizerFile, 'HuggingFaceTokenizer.fromFile'),
      config,
      tokenizerFile,
      path.dirname(tokenizerFile),
    );
  }

  /** A tokenizer.json's content (and tokenizer_config.json's). */
  static fromJSON(json: Json, config: Json = {}, source = 'the JSON', folder?: string): HuggingFaceTokenizer {
    const model = json.model as Json | undefined;
    if (typeof model?.type !== 'string' && typeof model?.vocab !== 'object') {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `HuggingFaceTokenizer: ${source} has no "model" with a vocab: expected a tokenizer.json`,
      );
    }
    try {
      return new HuggingFaceTokenizer(new TokenizersJs(json, config), json, config, folder);
    } catch (error) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `HuggingFaceTokenizer: ${source} cannot be read as a tokenizer: ${(error as Error).message}`,
      );
    }
  }

  encode(text: string, { addSpecialTokens = true }: EncodeOptions = {}): Int32Array {
    if (typeof text !== 'string')
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `HuggingFaceTokenizer.encode: expected a string, got ${typeof text}`,
      );
    return Int32Array.from(this.tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids);
  }

  decode(ids: ArrayLike<number | bigint>, { skipSpecialTokens = false }: DecodeOptions = {}): string {
    const checked = Array.from(ids, (id, i) => {
      const value = Number(id);
      if (!Number.isInteger(value) || value < 0 || value >= this.vocabSize) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `HuggingFaceTokenizer.decode: ids[${i}] is ${String(id)}, expected an id in [0, ${this.vocabSize - 1}]`,
        );
      }
      return value;
    });
    return checked.length === 0 ? '' : this.tokenizer.decode(checked, { skip_special_tokens: skipSpecialTokens });
  }

  /** The id of a token ('<|endoftext|>', 'Ġworld'), or undefined when the vocabulary lacks it. */
  tokenToId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  idToToken(id: number): string | undefined {
    return this.tokenizer.id_to_token(id);
  }

  /** The tokenizer.json it was made from (JSON.stringify writes the file again). */
  toJSON(): Json {
    return this.json;
  }
}
