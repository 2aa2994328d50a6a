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
import type { Tokenizer } from './tokenizer';

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

export class HuggingFaceTokenizer implements Tokenizer {
  /** Ids run from 0 to vocabSize - 1, added tokens included. */
  readonly vocabSize: number;

  private constructor(
    private readonly tokenizer: TokenizersJs,
    private readonly json: Json,
  ) {
    const vocabulary = tokenizer.get_vocab(true);
    this.vocabSize = vocabulary.size === 0 ? 0 : Math.max(...vocabulary.values()) + 1;
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
    );
  }

  /** A tokenizer.json's content (and tokenizer_config.json's). */
  static fromJSON(json: Json, config: Json = {}, source = 'the JSON'): HuggingFaceTokenizer {
    const model = json.model as Json | undefined;
    if (typeof model?.type !== 'string' && typeof model?.vocab !== 'object') {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `HuggingFaceTokenizer: ${source} has no "model" with a vocab: expected a tokenizer.json`,
      );
    }
    try {
      return new HuggingFaceTokenizer(new TokenizersJs(json, config), json);
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
