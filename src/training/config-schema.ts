// What every TrainerConfig field accepts. validateConfig collects every
// problem at once and throws one error listing each field by its path, the
// value given and what was expected; unknown keys get a did-you-mean.
import { firebrandError } from '../errors';
import { native } from '../native';

/** A check of one value: undefined when it is fine, else what was expected. */
type Rule = (value: unknown) => string | undefined;

const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER): Rule =>
  (value) =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max
      ? undefined
      : max === Number.MAX_SAFE_INTEGER
        ? `an integer >= ${min}`
        : `an integer in [${min}, ${max}]`;

const positive: Rule = (value) =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? undefined : 'a finite number > 0';

const boolean: Rule = (value) => (typeof value === 'boolean' ? undefined : 'true or false');

const text: Rule = (value) => (typeof value === 'string' && value.length > 0 ? undefined : 'a non-empty string');

const oneOf =
  (...choices: string[]): Rule =>
  (value) =>
    typeof value === 'string' && choices.includes(value)
      ? undefined
      : `${choices.length > 1 ? 'one of ' : ''}${choices.map((c) => `'${c}'`).join(', ')}`;

const either =
  (...rules: Rule[]): Rule =>
  (value) => {
    const expected = rules.map((rule) => rule(value));
    return expected.some((problem) => problem === undefined) ? undefined : expected.join(' or ');
  };

const strings: Rule = (value) =>
  Array.isArray(value) && value.every((item) => typeof item === 'string') ? undefined : 'a list of strings';

const fraction: Rule = (value) =>
  typeof value === 'number' && value > 0 && value <= 1 ? undefined : 'a number in (0, 1]';

type Schema = { [field: string]: Rule | Schema };

const gradScalerSchema: Schema = {
  enabled: boolean,
  initScale: positive,
  growthFactor: (value) => (typeof value === 'number' && value >= 1 && Number.isFinite(value) ? undefined : 'a number >= 1'),
  backoffFactor: fraction,
  growthInterval: integer(1),
};

const distributedSchema: Schema = {
  backend: oneOf('auto', 'gloo', 'nccl'),
  timeout: positive,
  bucketCapMb: positive,
  broadcastBuffers: boolean,
};

export const configSchema: Schema = {
  numEpochs: integer(1),
  maxSteps: integer(1),
  maxTime: positive,
  batchSize: integer(1),
  evalBatchSize: integer(1),
  evalEvery: either(integer(1), oneOf('epoch')),
  checkFiniteInputs: boolean,
  numWorkers: either(integer(0, 64), oneOf('auto')),
  prefetchFactor: integer(1),
  shuffle: boolean,
  dropLast: boolean,
  seed: integer(0),
  device: text,
  numThreads: integer(1),
  deterministic: boolean,
  gradientAccumulationSteps: integer(1),
  maxGradNorm: positive,
  clipValue: positive,
  nonFiniteLoss: oneOf('error', 'skip'),
  metrics: strings,
  mixedPrecision: oneOf('no', 'fp16', 'bf16'),
  gradScaler: gradScalerSchema,
  distributed: distributedSchema,
  logEvery: integer(1),
  progressBar: boolean,
  handleSignals: boolean,
  loggers: (value) =>
    Array.isArray(value) && value.every((name) => ['csv', 'jsonl', 'tensorboard'].includes(name as string))
      ? undefined
      : "a list of 'csv', 'jsonl', 'tensorboard'",
  outputDir: text,
  saveEvery: integer(1),
  saveTotalLimit: integer(1),
  resumeFromCheckpoint: either(boolean, text),
  metricForBestModel: text,
  greaterIsBetter: boolean,
  loadBestModelAtEnd: boolean,
  initWeightsFrom: text,
};

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function collect(values: Record<string, unknown>, schema: Schema, path: string, problems: string[]): void {
  const known = Object.keys(schema);
  for (const [key, value] of Object.entries(values)) {
    const fieldPath = `${path}.${key}`;
    const rule = schema[key];
    if (rule === undefined) {
      const suggestion = native.closestMatch(key, known);
      problems.push(`${fieldPath}: unknown field${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`);
    } else if (value === undefined) {
      continue;
    } else if (typeof rule === 'function') {
      const expected = rule(value);
      if (expected !== undefined) problems.push(`${fieldPath}: got ${describe(value)}, expected ${expected}`);
    } else if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`${fieldPath}: got ${describe(value)}, expected an object with fields ${Object.keys(rule).join(', ')}`);
    } else {
      collect(value as Record<string, unknown>, rule, fieldPath, problems);
    }
  }
}

/** Throws one ERR_FIREBRAND_INVALID_ARGUMENT listing every bad field of `values` (a partial config) under `origin`. */
export function validateConfig(values: unknown, origin = 'config'): void {
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `${origin}: expected an object of config fields, got ${describe(values)}`);
  }
  const problems: string[] = [];
  collect(values as Record<string, unknown>, configSchema, origin, problems);
  if (problems.length === 1) throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', problems[0]);
  if (problems.length > 1) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `${origin} has ${problems.length} problems:\n  ${problems.join('\n  ')}`);
  }
}

/** Every config field by path ('gradScaler.initScale') with what it accepts, for --help. */
export function configFieldDescriptions(schema: Schema = configSchema, prefix = ''): { field: string; accepts: string }[] {
  return Object.entries(schema).flatMap(([key, rule]) =>
    typeof rule === 'function'
      ? [{ field: `${prefix}${key}`, accepts: rule(Symbol('nothing')) ?? '' }]
      : configFieldDescriptions(rule, `${prefix}${key}.`),
  );
}
