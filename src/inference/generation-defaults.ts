// What generate does unless told otherwise, for a Hugging Face checkpoint: its
// generation_config.json (else config.json's eos_token_id), read as
// transformers' generate reads it, with transformers' own defaults for what the
// file leaves out (GenerationConfig._get_default_generation_params: greedy
// unless do_sample, temperature 1, top_k 50, top_p 1, min_p and
// no_repeat_ngram_size off). Options given to
// generate override each default.
import type { GenerateOptions } from '../native';

/** A model's generate defaults, and the checkpoint's settings that generate does not apply. */
export interface GenerationDefaults {
  options: GenerateOptions;
  /** generation_config.json's fields, as `name=value`, that change transformers' tokens and that firebrand does not do. */
  unapplied: string[];
}

/** Fields that change what transformers generates, with the value at which they change nothing. */
const UNAPPLIED_UNLESS: Record<string, unknown> = {
  num_beams: 1,
  typical_p: 1,
  epsilon_cutoff: 0,
  eta_cutoff: 0,
  penalty_alpha: null,
  min_length: 0,
  min_new_tokens: null,
  bad_words_ids: null,
  suppress_tokens: null,
  begin_suppress_tokens: null,
  forced_bos_token_id: null,
  forced_eos_token_id: null,
  sequence_bias: null,
  exponential_decay_length_penalty: null,
  encoder_repetition_penalty: 1,
};

const numberOr = (value: unknown, fallback: number): number => (typeof value === 'number' ? value : fallback);

/** The defaults of a checkpoint with `generationConfig` (generation_config.json, if any) and `config` (config.json). */
export function checkpointGenerationDefaults(
  generationConfig: Record<string, unknown> | undefined,
  config: Record<string, unknown>,
): GenerationDefaults {
  const file = generationConfig ?? {};
  const eos = file.eos_token_id ?? config.eos_token_id;
  const stopTokens = [eos].flat().filter((id): id is number => typeof id === 'number');
  const options: GenerateOptions = {
    greedy: file.do_sample !== true,
    temperature: numberOr(file.temperature, 1),
    topK: numberOr(file.top_k, 50),
    ...(numberOr(file.top_p, 1) < 1 ? { topP: numberOr(file.top_p, 1) } : {}),
    ...(numberOr(file.repetition_penalty, 1) !== 1 ? { repetitionPenalty: numberOr(file.repetition_penalty, 1) } : {}),
    ...(typeof file.min_p === 'number' ? { minP: file.min_p } : {}),
    ...(numberOr(file.no_repeat_ngram_size, 0) > 0
      ? { noRepeatNgramSize: numberOr(file.no_repeat_ngram_size, 0) }
      : {}),
    ...(typeof file.max_new_tokens === 'number' ? { maxNewTokens: file.max_new_tokens } : {}),
    ...(stopTokens.length > 0 ? { stopTokens } : {}),
  };
  const unapplied = Object.entries(UNAPPLIED_UNLESS)
    .filter(([name, neutral]) => file[name] !== undefined && file[name] !== neutral)
    .map(([name]) => `${name}=${JSON.stringify(file[name])}`);
  return { options, unapplied };
}

/**
 * `given` over `defaults`: an option given (not undefined) wins. A sampling option (temperature, topK,
 * topP, minP) given without `greedy` asks for sampling, also where the checkpoint decodes greedily.
 */
export function withGenerationDefaults(given: GenerateOptions, defaults: GenerateOptions | undefined): GenerateOptions {
  const stated = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  const samples =
    given.greedy === undefined &&
    (given.temperature !== undefined ||
      given.topK !== undefined ||
      given.topP !== undefined ||
      given.minP !== undefined);
  return { ...defaults, ...(samples ? { greedy: false } : {}), ...stated };
}
