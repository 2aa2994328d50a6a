// --set key=value overrides of a run file: a dotted path into it, the value
// as JSON when it parses (numbers, booleans, lists), else as a string.
import { firebrandError } from '../errors';

/** Sets `assignment` ('config.numEpochs=5', or a bare config field 'numEpochs=5') in `run`. */
export function applyOverride(run: Record<string, unknown>, assignment: string, topLevelKeys: readonly string[]): void {
  const equals = assignment.indexOf('=');
  if (equals <= 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `--set ${assignment}: expected key=value, like config.numEpochs=5`,
    );
  }
  const key = assignment.slice(0, equals);
  const text = assignment.slice(equals + 1);
  const segments = key.split('.');
  // A bare field is a config field, as most overrides are.
  if (!topLevelKeys.includes(segments[0])) segments.unshift('config');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = text;
  }
  let target = run;
  for (const segment of segments.slice(0, -1)) {
    const next = target[segment];
    if (next === undefined) {
      target[segment] = {};
    } else if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `--set ${key}: '${segment}' holds ${JSON.stringify(next)}, not an object`,
      );
    }
    target = target[segment] as Record<string, unknown>;
  }
  target[segments[segments.length - 1]] = value;
}
