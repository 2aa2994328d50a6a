// A checkpoint's weights into the model a trainer built: each shard in turn,
// then one check that every weight came from some file and no file held a
// weight the architecture lacks (except buffers transformers itself ignores).
import { firebrandError } from '../errors';
import type { NativeEngine } from '../native';
import type { PretrainedSource } from './from-pretrained';

/** Weights older checkpoints hold that the architectures make anew (transformers ignores them on load too). */
const IGNORED_ON_LOAD = [/\.attn\.(bias|masked_bias)$/, /\.rotary_emb\.inv_freq$/];

const listed = (names: string[]) =>
  names.slice(0, 8).join(', ') + (names.length > 8 ? ` and ${names.length - 8} more` : '');

export async function loadPretrainedWeights(engine: NativeEngine, source: PretrainedSource): Promise<void> {
  let missing: Set<string> | undefined;
  const unexpected = new Set<string>();
  for (const file of source.weightFiles) {
    const result = await engine.initWeightsFrom(file, false);
    missing = new Set(result.missing.filter((name) => missing === undefined || missing.has(name)));
    for (const name of result.unexpected)
      if (!IGNORED_ON_LOAD.some((pattern) => pattern.test(name))) unexpected.add(name);
  }
  const absent = [...(missing ?? [])];
  const extra = [...unexpected];
  if (absent.length === 0 && extra.length === 0) return;
  const problems = [
    absent.length > 0 ? `the model's ${listed(absent)} are in no file` : '',
    extra.length > 0 ? `the files' ${listed(extra)} are not the model's` : '',
  ].filter(Boolean);
  throw firebrandError(
    'ERR_FIREBRAND_FILE',
    `fromPretrained: ${source.folder} does not fit a ${source.config.model_type} model built from its config.json: ${problems.join('; ')}`,
  );
}
