// The keys of an options object a method takes (fit, predict, load, ...): one
// that is none of them is refused with a did-you-mean, as the constructor's
// config is, never ignored; names other libraries use for the same thing
// (Keras' `epochs`) point at firebrand's.
import { firebrandError } from '../errors';
import { didYouMean } from './closest-match';

/** Names users bring from Keras, TensorFlow.js and transformers, and where firebrand has them. */
const ELSEWHERE: Record<string, string> = {
  epochs: "'numEpochs'",
  callbacks: "the Trainer's config (new Trainer({ ..., callbacks }))",
  validationData: "'evalData'",
  eval_dataset: "'evalData'",
  max_new_tokens: "'maxNewTokens'",
};

/**
 * Refuses any key of `options` that is not in `known`, naming `where` ("fit options"), the key, the closest
 * known one and the keys there are. Undefined or null options pass (the method's defaults).
 */
export function refuseUnknownKeys(options: unknown, known: readonly string[], where: string): void {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `${where}: expected an object of options`);
  }
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const named = unknown.map((key) => {
    const elsewhere = Object.hasOwn(ELSEWHERE, key) ? ` (firebrand's name: ${ELSEWHERE[key]})` : '';
    return `'${key}'${elsewhere || didYouMean(key, known)}`;
  });
  throw firebrandError(
    'ERR_FIREBRAND_INVALID_ARGUMENT',
    `${where}: unknown option${unknown.length > 1 ? 's' : ''} ${named.join(', ')}; the options are ${known.join(', ') || 'none'}`,
  );
}

/**
 * Every key of the options type `T`, listed once beside it: `optionKeys<FitOptions>()(['evalData', ...])`
 * does not compile while the list misses one of T's keys.
 */
export const optionKeys =
  <T>() =>
  <const K extends readonly (keyof T & string)[]>(keys: Exclude<keyof T, K[number]> extends never ? K : never): K =>
    keys;
