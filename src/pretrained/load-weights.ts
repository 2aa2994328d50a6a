// A checkpoint's weights into the model a trainer built: each shard in turn,
// then one check that every weight came from some file and no file held a
// weight the architecture lacks (except buffers transformers itself ignores).
// A module replaced after the model was made (a new head, as torchvision users
// swap model.fc) keeps its own weights: the file's for it are left out.
import { firebrandError } from '../errors';
import { native, type NativeEngine } from '../native';
import type { Module } from '../nn/module/module';
import type { PretrainedSource } from './from-pretrained';

/** Weights older checkpoints hold that the architectures make anew (transformers ignores them on load too). */
const IGNORED_ON_LOAD = [/\.attn\.(bias|masked_bias)$/, /\.rotary_emb\.inv_freq$/];

/** Old checkpoints' LayerNorm names (BERT's gamma and beta), renamed as transformers renames them on load. */
const LEGACY_NAMES: [RegExp, string][] = [
  [/LayerNorm\.gamma$/, 'LayerNorm.weight'],
  [/LayerNorm\.beta$/, 'LayerNorm.bias'],
];

/** The paths of the modules replaced since the model was made (the outermost of them). */
function replacedModules(model: Module, source: PretrainedSource): string[] {
  const now = new Map(model.namedModules());
  const replaced = [...source.modules].filter(([path, module]) => path !== '' && now.get(path) !== module);
  const paths = replaced.map(([path]) => path);
  return paths.filter((path) => !paths.some((outer) => path.startsWith(`${outer}.`)));
}

const under = (name: string, paths: string[]) => paths.some((path) => name.startsWith(`${path}.`));

/**
 * The file's weights renamed (legacy names; under `prefix`, the path of the module they are for inside
 * the model) or left out (null: those of replaced modules).
 */
async function renamesOf(file: string, replaced: string[], prefix: string): Promise<Record<string, string | null>> {
  const renames: Record<string, string | null> = {};
  for (const name of await native.weightNames(file)) {
    let target = name;
    for (const [pattern, replacement] of LEGACY_NAMES) target = target.replace(pattern, replacement);
    if (prefix !== '') target = `${prefix}.${target}`;
    if (under(target, replaced)) renames[name] = null;
    else if (target !== name) renames[name] = target;
  }
  return renames;
}

/**
 * The state names of `module` (at `prefix` in the model) that `source`'s files fill: what the build need not
 * draw initial values for, since loadPretrainedWeights overwrites them right after.
 */
export async function namesLoadedFrom(module: Module, source: PretrainedSource, prefix = ''): Promise<string[]> {
  const replaced = replacedModules(module, source).map((path) => (prefix === '' ? path : `${prefix}.${path}`));
  const names: string[] = [];
  for (const file of source.weightFiles) {
    const renames = await renamesOf(file, replaced, prefix);
    for (const name of await native.weightNames(file)) {
      const target = name in renames ? renames[name] : name;
      if (target !== null) names.push(target);
    }
  }
  return names;
}

const listed = (names: string[]) =>
  names.slice(0, 8).join(', ') + (names.length > 8 ? ` and ${names.length - 8} more` : '');

/** Loads `source`'s weights into `module`, the model itself or the module at `prefix` inside it. */
export async function loadPretrainedWeights(
  engine: NativeEngine,
  module: Module,
  source: PretrainedSource,
  prefix = '',
): Promise<void> {
  const inModel = (path: string) => (prefix === '' ? path : `${prefix}.${path}`);
  const replaced = replacedModules(module, source).map(inModel);
  const outside = (name: string) => prefix !== '' && !name.startsWith(`${prefix}.`);
  let missing: Set<string> | undefined;
  const unexpected = new Set<string>();
  for (const file of source.weightFiles) {
    const result = await engine.initWeightsFrom(file, false, await renamesOf(file, replaced, prefix));
    missing = new Set(
      result.missing.filter(
        (name) => (missing === undefined || missing.has(name)) && !under(name, replaced) && !outside(name),
      ),
    );
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
    `${source.weightFiles.length === 1 ? source.weightFiles[0] : source.folder} does not fit the ${source.config.architectures} model: ${problems.join('; ')}`,
  );
}
