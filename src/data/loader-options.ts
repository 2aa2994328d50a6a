// The options of dataset.batches() and batchOrder(): how one epoch is cut into
// batches, with the config's rules and defaults for the fields they share.
import { boolean, either, field, integer, oneOf, resolve, Schema, validate } from '../options/schema';
import type { NativeLoaderRequest } from '../native-specs';

// The fields that cut an epoch into batches: shared by the config and the loader options.
export const batchingFields = {
  batchSize: field(integer(1), 32, [1, 4096]),
  shuffle: field(boolean, true, [false]),
  dropLast: field(boolean, false, [true]),
  seed: field(integer(0), 42, [0, 2 ** 53 - 1]),
  numWorkers: field(either(integer(0, 64), oneOf('auto')), 'auto', [0, 2, 'auto']),
  prefetchFactor: field(integer(1), 2, [1, 64]),
};

const { numWorkers, prefetchFactor, ...sampling } = batchingFields;

/** dataset.batchOrder(): one epoch's sample order as training cuts it. */
export const batchOrderSchema: Schema = {
  ...sampling,
  epoch: field(integer(0), 0, [0, 7]),
  rank: field(integer(0), 0, [0]),
  worldSize: field(integer(1), 1, [1]),
};

/** dataset.batches(): one epoch's batches as training loads them. */
export const loaderSchema: Schema = {
  ...batchOrderSchema,
  startBatch: field(integer(0), 0, [0, 1]),
  numWorkers,
  prefetchFactor,
};

/** `options` checked against `schema` (errors under `origin`) and defaulted, as C++ takes them. */
export function resolveLoaderOptions(options: object, schema: Schema, origin: string): NativeLoaderRequest {
  validate(options, schema, origin);
  const resolved = resolve(options as Record<string, unknown>, schema);
  if (resolved.numWorkers === 'auto') resolved.numWorkers = undefined;
  return resolved as unknown as NativeLoaderRequest;
}
