// A checkpoint's weights into the model a trainer built: each shard in turn,
// then one check that every weight came from some file and no file held a
// weight the architecture lacks (except buffers transformers itself ignores).
import { firebrandError } from '../errors';
import { native, type NativeEngine } from '../native';
import type { PretrainedSource } from './from-pretrained';

/** Weights older checkpoints hold that the architectures make anew (transformers ignores them on load too). */
const IGNORED_ON_LOAD = [/\.attn\.(bias|masked_bias)$/, /\.rotary_emb\.inv_freq$/];

/** Old checkpoints' LayerNorm names (BERT's gamma and beta), renamed as transformers renames them on load. */
const LEGACY_NAMES: [RegExp, string][] = [
  [/LayerNorm\.gamma$/, 'LayerNorm.weight'],
  [/LayerNorm\.beta$/, 'LayerNorm.bias'],
];

async function legacyRenames(file: string): Promise<Record<string, string>> {
  const renames: Record<string, string> = {};
  for (const name of await native.weightNames(file)) {
    for (const [pattern, replacement] of LEGACY_NAMES)
      if (pattern.test(name)) renames[name] = name.replace(pattern, replacement);
  }
  return renames;
}

const listed = (names: string[]) =>
  names.slice(0, 8).join(', ') + (names.length > 8 ? ` and ${names.length - 8} more` : '');

export async function loadPretrainedWeights(engine: NativeEngine, source: PretrainedSource): Promise<void> {
  let missing: Set<string> | undefined;
  const unexpected = new Set<string>();
  for (const file of source.weightFiles) {
    const result = await engine.initWeightsFrom(file, false, await legacyRenames(file));
    missing = new Set(result.missing.filter((name) => missing === undefined || missing.has(name)));
    for (const name of result.unexpected)
      if (!IGNORED_ON_LOAD.some((pattern) => pattern.test(name))) unexpected.add(name);
  }
  const absent = [...(missing ?? [])];
  const extra = [...unexpected];
  if (source.newHead) {
    // Another class than the checkpoint's: as transformers, its new weights start from their initialization.
    if (absent.length > 0) {
      console.warn(
        `fromPretrained: ${source.config.architectures} weights not in ${source.folder}, newly initialized: ${listed(absent)}`,
      );
    }
    return;
  }
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
