// The options of serve() and `firebrand serve`: where the server listens, what
// it calls the model, how many sequences it decodes together.
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';
import { field, integer, resolveOptions, text, type Schema } from '../options/schema';

export interface ServeOptions {
  /** Interface to listen on. Default '127.0.0.1' (this machine only); '0.0.0.0' for every interface. */
  host?: string;
  /** Port to listen on. Default 8000 (vLLM's); 0 picks a free one (server.port says which). */
  port?: number;
  /** The model's name in /v1/models and in requests' `model`. Default 'firebrand'. */
  modelName?: string;
  /** Sequences decoded together in one batch at most. Default 8. */
  maxBatchSize?: number;
  /** Batches decoding at once at most (their steps take turns). Default 2. */
  maxConcurrentBatches?: number;
  /** Tokens per chat choice when a request gives no max_tokens. Default: the checkpoint's max_new_tokens, else 256. */
  defaultMaxTokens?: number;
}

const SERVE_OPTION_KEYS = optionKeys<ServeOptions>()([
  'host',
  'port',
  'modelName',
  'maxBatchSize',
  'maxConcurrentBatches',
  'defaultMaxTokens',
]);

const serveSchema: Schema = {
  host: field(text, '127.0.0.1', ['127.0.0.1']),
  port: field(integer(0, 65535), 8000, [8000]),
  modelName: field(text, 'firebrand', ['firebrand']),
  maxBatchSize: field(integer(1), 8, [8]),
  maxConcurrentBatches: field(integer(1), 2, [2]),
  defaultMaxTokens: field(integer(1), undefined, [256]),
};

/** `options` checked and defaulted; defaultMaxTokens falls back to the checkpoint's max_new_tokens, else 256. */
export function resolveServeOptions(
  options: ServeOptions,
  checkpointMaxTokens: number | undefined,
): Required<ServeOptions> {
  refuseUnknownKeys(options, SERVE_OPTION_KEYS, 'serve options');
  const resolved = resolveOptions(options, serveSchema, 'serve') as ServeOptions;
  return {
    ...(resolved as Required<ServeOptions>),
    defaultMaxTokens: resolved.defaultMaxTokens ?? checkpointMaxTokens ?? 256,
  };
}
