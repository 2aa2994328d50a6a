// initWeightsFrom's map: the file's weight names renamed before they are
// matched to the model's (checkpoints saved under DDP's 'module.', a backbone
// under another name, a head left out), as a table C++ applies.
import { firebrandError } from '../errors';

/** Renames by prefix ({ 'module.': '' }), or a function of each name: the new name, or null to leave it out. */
export type WeightNameMap = Record<string, string> | ((name: string) => string | null);

/** Each renamed or dropped weight of `names`: its new name, or null. */
export function weightRenames(names: string[], map: WeightNameMap): Record<string, string | null> {
  const renames: Record<string, string | null> = {};
  if (typeof map === 'function') {
    for (const name of names) {
      const target = map(name);
      if (target !== null && (typeof target !== 'string' || target === '')) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `initWeightsFrom.map('${name}') returned ${JSON.stringify(target)}, expected a name or null`,
        );
      }
      if (target !== name) renames[name] = target;
    }
    return renames;
  }
  if (typeof map !== 'object' || map === null)
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'initWeightsFrom.map: expected prefix renames or a function',
    );
  // The longest prefix that fits wins ('encoder.layer.' before 'encoder.').
  const prefixes = Object.keys(map).sort((a, b) => b.length - a.length);
  const used = new Set<string>();
  for (const name of names) {
    const prefix = prefixes.find((from) => name.startsWith(from));
    if (prefix === undefined) continue;
    used.add(prefix);
    renames[name] = map[prefix] + name.slice(prefix.length);
  }
  const unused = prefixes.filter((prefix) => !used.has(prefix));
  if (unused.length > 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `initWeightsFrom.map: no weight name starts with ${unused.map((prefix) => `'${prefix}'`).join(', ')}; the file's names look like ${names
        .slice(0, 4)
        .map((name) => `'${name}'`)
        .join(', ')}`,
    );
  }
  return renames;
}

/** initWeightsFrom's options. */
export interface InitWeightsOptions {
  /** Names on one side only are an error (default), else reported. */
  strict?: boolean;
  /** Renames the file's weights first: by prefix, or a function of each name (null leaves it out). */
  map?: WeightNameMap;
}
