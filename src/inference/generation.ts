// generate() and generateBatch() on a Trainer or a loaded Model: C++ samples each
// step's tokens (the model run, the sampling) and JavaScript awaits them one step
// at a time as an async iterator.
import type { GenerateOptions, GenerationHandle, GenerationStep, NumericArray } from '../native';
import { firebrandError } from '../errors';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';
import { GeneratedText } from '../text/text-streamer';
import type { Tokenizer } from '../text/tokenizer';

interface Generating {
  startGeneration(prompts: NumericArray[], options: GenerateOptions & { logprobs?: boolean }): GenerationHandle;
  generateNext(generation: GenerationHandle): Promise<GenerationStep | null>;
}

const GENERATE_OPTION_KEYS = optionKeys<GenerateOptions>()([
  'maxNewTokens',
  'temperature',
  'topK',
  'topP',
  'repetitionPenalty',
  'noRepeatNgramSize',
  'minP',
  'greedy',
  'seed',
  'stopTokens',
  'contextLength',
  'kvCache',
]);

const isTypedArray = (value: unknown): value is NumericArray =>
  ArrayBuffer.isView(value) && !(value instanceof DataView);

/**
 * Each step of `native`'s sampling after `prompts`, decoded together as one batch: a token per prompt,
 * null for a prompt that has ended (it gave a stop token at an earlier step), and with `logprobs` each
 * token's log-probability under the model's raw logits.
 */
export async function* scoredSteps(
  native: Generating,
  prompts: (ArrayLike<number> | NumericArray)[],
  options: GenerateOptions,
  logprobs: boolean,
): AsyncGenerator<GenerationStep, void, undefined> {
  refuseUnknownKeys(options, GENERATE_OPTION_KEYS, 'generate options');
  // A plain array goes as float64, so C++ names fractional ids instead of truncating them.
  const ids = prompts.map((prompt) => (isTypedArray(prompt) ? prompt : Float64Array.from(prompt)));
  const handle = native.startGeneration(ids, { ...options, logprobs });
  for (;;) {
    const step = await native.generateNext(handle);
    if (step === null) return;
    yield step;
  }
}

/** Each step's tokens that `native` samples after `prompts`, decoded together as one batch (scoredSteps'). */
export async function* generateSteps(
  native: Generating,
  prompts: (ArrayLike<number> | NumericArray)[],
  options: GenerateOptions,
): AsyncGenerator<(number | null)[], void, undefined> {
  for await (const { tokens } of scoredSteps(native, prompts, options, false)) yield tokens;
}

/** The tokens `native` samples after `prompt`, as they come. */
export async function* generateTokens(
  native: Generating,
  prompt: ArrayLike<number> | NumericArray,
  options: GenerateOptions,
): AsyncGenerator<number, void, undefined> {
  for await (const [token] of generateSteps(native, [prompt], options)) {
    if (token === null) return;
    yield token;
  }
}

/** generateText's options: generate's, and strings that end the text before them. */
export interface GenerateTextOptions extends GenerateOptions {
  /** The text ends before the first of these (OpenAI's `stop`); generation stops there. */
  stopStrings?: string[];
}

/**
 * `tokens`' text in pieces that never split a character, without the text of a stop token (one of
 * `stopTokens`), ending before the first of `stopStrings`.
 */
export async function* streamText(
  tokens: AsyncGenerator<number, void, undefined>,
  tokenizer: Tokenizer,
  stopTokens: number[],
  stopStrings: string[],
): AsyncGenerator<string, void, undefined> {
  if (!Array.isArray(stopStrings) || stopStrings.some((stop) => typeof stop !== 'string' || stop === '')) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `generateText: stopStrings must be an array of non-empty strings, got ${JSON.stringify(stopStrings)}`,
    );
  }
  const text = new GeneratedText(tokenizer, stopTokens, stopStrings);
  try {
    for await (const token of tokens) {
      const piece = text.push(token);
      if (piece !== '') yield piece;
      if (text.stopped) return;
    }
    const last = text.end();
    if (last !== '') yield last;
  } finally {
    await tokens.return();
  }
}
