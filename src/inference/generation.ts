// generate() on a Trainer or a loaded Model: C++ samples each token (the model
// run, the sampling) and JavaScript awaits them one by one as an async iterator.
import type { GenerateOptions, GenerationHandle, NumericArray } from '../native';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';

interface Generating {
  startGeneration(prompt: NumericArray, options: GenerateOptions): GenerationHandle;
  generateNext(generation: GenerationHandle): Promise<number | null>;
}

const GENERATE_OPTION_KEYS = optionKeys<GenerateOptions>()([
  'maxNewTokens',
  'temperature',
  'topK',
  'topP',
  'greedy',
  'seed',
  'stopTokens',
  'contextLength',
  'kvCache',
]);

const isTypedArray = (value: unknown): value is NumericArray =>
  ArrayBuffer.isView(value) && !(value instanceof DataView);

/** The tokens `native` samples after `prompt`, as they come. */
export async function* generateTokens(
  native: Generating,
  prompt: ArrayLike<number> | NumericArray,
  options: GenerateOptions,
): AsyncGenerator<number, void, undefined> {
  refuseUnknownKeys(options, GENERATE_OPTION_KEYS, 'generate options');
  // A plain array goes as float64, so C++ names fractional ids instead of truncating them.
  const handle = native.startGeneration(isTypedArray(prompt) ? prompt : Float64Array.from(prompt), options);
  for (;;) {
    const token = await native.generateNext(handle);
    if (token === null) return;
    yield token;
  }
}
