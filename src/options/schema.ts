// Option schemas: what each field a user writes accepts and its default, in
// one place per object (config-schema.ts, data/loader-options.ts). validate
// collects every problem at once and throws one error listing each field by
// its path, the value given and what was expected; unknown keys get a
// did-you-mean. resolve fills in the defaults. C++ receives resolved values,
// typed, and checks nothing again.
import { firebrandError } from '../errors';
import { didYouMean } from './closest-match';

/** A check of one value: undefined when it is fine, else what was expected. */
export type Rule = (value: unknown) => string | undefined;

/** What the resolved object holds so far, for defaults that follow other fields. */
export type Resolved = Record<string, unknown>;

/** One field: what it accepts and its default (a value, a function of the fields around it, or none). */
export class Field {
  constructor(
    readonly rule: Rule,
    readonly fallback?: unknown,
    /** The default as --help and the config reference show it, when it is not a plain value. */
    readonly shown?: string,
    /** Values the rule accepts, at its bounds: the schema test sends each to C++. */
    readonly samples: unknown[] = [],
  ) {}

  defaultFor(siblings: Resolved, root: Resolved): unknown {
    return typeof this.fallback === 'function'
      ? (this.fallback as (s: Resolved, r: Resolved) => unknown)(siblings, root)
      : this.fallback;
  }

  get defaultText(): string {
    if (this.shown !== undefined) return this.shown;
    if (this.fallback === REQUIRED) return 'required';
    return this.fallback === undefined ? 'none' : describe(this.fallback);
  }
}

/** An optional list of objects that each follow `schema` (an optimizer's paramGroups). */
export class ListOf {
  constructor(readonly schema: Schema) {}

  get description(): string {
    return `a list of { ${Object.entries(this.schema)
      .map(([key, entry]) => (entry instanceof Field && entry.fallback !== REQUIRED ? `${key}?` : key))
      .join(', ')} }`;
  }
}

export type Schema = { [field: string]: Field | ListOf | Schema };

export const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER): Rule =>
  (value) =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max
      ? undefined
      : max === Number.MAX_SAFE_INTEGER
        ? `an integer >= ${min}`
        : `an integer in [${min}, ${max}]`;

export const positive: Rule = (value) =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? undefined : 'a finite number > 0';

export const atLeastOne: Rule = (value) =>
  typeof value === 'number' && value >= 1 && Number.isFinite(value) ? undefined : 'a finite number >= 1';

export const boolean: Rule = (value) => (typeof value === 'boolean' ? undefined : 'true or false');

export const text: Rule = (value) => (typeof value === 'string' && value.length > 0 ? undefined : 'a non-empty string');

export const oneOf =
  (...choices: string[]): Rule =>
  (value) =>
    typeof value === 'string' && choices.includes(value)
      ? undefined
      : `${choices.length > 1 ? 'one of ' : ''}${choices.map((c) => `'${c}'`).join(', ')}`;

export const either =
  (...rules: Rule[]): Rule =>
  (value) => {
    const expected = rules.map((rule) => rule(value));
    return expected.some((problem) => problem === undefined) ? undefined : expected.join(' or ');
  };

export const listOf =
  (...choices: string[]): Rule =>
  (value) =>
    Array.isArray(value) &&
    value.every((item) => (choices.length === 0 ? typeof item === 'string' : choices.includes(item as string)))
      ? undefined
      : choices.length === 0
        ? 'a list of strings'
        : `a list of ${choices.map((c) => `'${c}'`).join(', ')}`;

export const fraction: Rule = (value) =>
  typeof value === 'number' && value > 0 && value <= 1 ? undefined : 'a number in (0, 1]';

/** A number in a range: `min` inclusive unless `above` (then > min), `max` inclusive. */
export const number =
  (min: number, max = Infinity, above = false): Rule =>
  (value) => {
    const fits =
      typeof value === 'number' && Number.isFinite(value) && (above ? value > min : value >= min) && value <= max;
    if (fits) return undefined;
    if (max === Infinity) return `a number ${above ? '>' : '>='} ${min}`;
    return `a number in ${above ? '(' : '['}${min}, ${max}]`;
  };

export const anyInteger: Rule = (value) =>
  typeof value === 'number' && Number.isSafeInteger(value) ? undefined : 'an integer';

/** A non-empty list of numbers >= `min` (class weights), of `length` when given. */
export const numberList =
  (min: number, length?: number): Rule =>
  (value) =>
    Array.isArray(value) &&
    value.length > 0 &&
    (length === undefined || value.length === length) &&
    value.every((item) => typeof item === 'number' && Number.isFinite(item) && item >= min)
      ? undefined
      : `a ${length === undefined ? 'non-empty list' : `list of ${length}`} of numbers >= ${min}`;

/** A field the user must give: it has no default. */
export const REQUIRED = Symbol('required');

export const field = (rule: Rule, fallback?: unknown, samples: unknown[] = [], shown?: string) =>
  new Field(rule, fallback, shown, samples);

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function collectObject(value: unknown, schema: Schema, path: string, problems: string[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${path}: got ${describe(value)}, expected an object with fields ${Object.keys(schema).join(', ')}`);
  } else {
    collect(value as Record<string, unknown>, schema, path, problems);
  }
}

function collect(values: Record<string, unknown>, schema: Schema, path: string, problems: string[]): void {
  const known = Object.keys(schema);
  for (const [key, entry] of Object.entries(schema)) {
    if (entry instanceof Field && entry.fallback === REQUIRED && values[key] === undefined) {
      problems.push(`${path}.${key}: missing, expected ${entry.rule(Symbol('nothing'))}`);
    }
  }
  for (const [key, value] of Object.entries(values)) {
    const fieldPath = `${path}.${key}`;
    const entry = schema[key];
    if (entry === undefined) {
      problems.push(`${fieldPath}: unknown field${didYouMean(key, known)}`);
    } else if (value === undefined) {
      continue;
    } else if (entry instanceof Field) {
      const expected = entry.rule(value);
      if (expected !== undefined) problems.push(`${fieldPath}: got ${describe(value)}, expected ${expected}`);
    } else if (entry instanceof ListOf) {
      if (!Array.isArray(value)) problems.push(`${fieldPath}: got ${describe(value)}, expected ${entry.description}`);
      else value.forEach((item, i) => collectObject(item, entry.schema, `${fieldPath}[${i}]`, problems));
    } else {
      collectObject(value, entry, fieldPath, problems);
    }
  }
}

/** Throws one ERR_FIREBRAND_INVALID_ARGUMENT listing every bad field of `values` (a partial object) under `origin`. */
export function validate(values: unknown, schema: Schema, origin: string): void {
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${origin}: expected an object of fields, got ${describe(values)}`,
    );
  }
  const problems: string[] = [];
  collect(values as Record<string, unknown>, schema, origin, problems);
  throwProblems(problems, origin);
}

function throwProblems(problems: string[], origin: string): void {
  if (problems.length === 1) throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', problems[0]);
  if (problems.length > 1) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${origin} has ${problems.length} problems:\n  ${problems.join('\n  ')}`,
    );
  }
}

/**
 * Objects chosen by a tag (a loss's or optimizer's 'name'): each tag has its own fields. `check` adds
 * rules across fields (SGD's nesterov needs momentum), on the resolved object.
 */
export class Variants {
  constructor(
    /** 'loss', 'optimizer': what the objects are, in messages. */
    readonly kind: string,
    readonly variants: Record<string, Schema>,
    readonly check: (resolved: Resolved) => string | undefined = () => undefined,
    /** The field that chooses the variant: a loss's 'name', a layer's 'type'. */
    readonly tag: 'name' | 'type' = 'name',
  ) {}

  /** `value` checked (every problem at once, under `origin`) and defaulted; the tag stays first. */
  resolve(value: unknown, origin: string): Resolved {
    const tag = this.tag;
    const spec = typeof value === 'string' && tag === 'name' ? { name: value } : value;
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
      const expected = tag === 'name' ? `a ${this.kind} name or { name, ... }` : `an object { ${tag}, ... }`;
      throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `${origin}: expected ${expected}, got ${describe(spec)}`);
    }
    const { [tag]: name, ...fields } = spec as Resolved;
    const known = Object.keys(this.variants);
    const schema = typeof name === 'string' ? this.variants[name] : undefined;
    if (schema === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${origin}: unknown ${this.kind} ${describe(name)}${typeof name === 'string' ? didYouMean(name, known) : ''}; known: ${known.join(', ')}`,
      );
    }
    const where = `${origin} (${name})`;
    const problems: string[] = [];
    collect(fields, schema, where, problems);
    throwProblems(problems, where);
    const resolved = { [tag]: name, ...resolve(fields, schema) };
    const crossField = this.check(resolved);
    if (crossField !== undefined) throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `${where}: ${crossField}`);
    return withoutUndefined(resolved);
  }
}

/** `values` (validated) with every field the schema has: given ones kept, the rest defaulted; nested objects likewise. */
export function resolve(values: Resolved, schema: Schema, root?: Resolved): Resolved {
  const resolved: Resolved = {};
  const top = root ?? resolved;
  // Plain fields first, so that defaults may follow them (evalBatchSize: batchSize).
  const entries = Object.entries(schema).sort(
    ([, a], [, b]) =>
      Number(typeof (a as Field).fallback === 'function') - Number(typeof (b as Field).fallback === 'function'),
  );
  for (const [key, entry] of entries) {
    const given = values[key];
    if (entry instanceof Field) {
      resolved[key] = given !== undefined ? given : entry.defaultFor(resolved, top);
    }
  }
  for (const [key, entry] of Object.entries(schema)) {
    if (entry instanceof ListOf) {
      const items = values[key] as Resolved[] | undefined;
      resolved[key] = items?.map((item) => withoutUndefined(resolve(item, entry.schema)));
    } else if (!(entry instanceof Field)) {
      resolved[key] = resolve((values[key] ?? {}) as Resolved, entry, top);
    }
  }
  return Object.fromEntries(Object.keys(schema).map((key) => [key, resolved[key]]));
}

function withoutUndefined(values: Resolved): Resolved {
  return Object.fromEntries(Object.entries(values).filter(([, item]) => item !== undefined));
}

/** Every field by path ('gradScaler.initScale') with its default and what it accepts, for --help and the config reference. */
export function fieldDescriptions(schema: Schema, prefix = ''): { field: string; default: string; accepts: string }[] {
  return Object.entries(schema).flatMap(([key, entry]) =>
    entry instanceof Field
      ? [{ field: `${prefix}${key}`, default: entry.defaultText, accepts: entry.rule(Symbol('nothing')) ?? '' }]
      : entry instanceof ListOf
        ? [{ field: `${prefix}${key}`, default: 'none', accepts: entry.description }]
        : fieldDescriptions(entry, `${prefix}${key}.`),
  );
}

/** Every field by path with its Field, for tests that walk the schema. */
export function fieldsOf(schema: Schema, prefix = ''): [string, Field][] {
  return Object.entries(schema).flatMap(([key, entry]) =>
    entry instanceof Field
      ? [[`${prefix}${key}`, entry] as [string, Field]]
      : entry instanceof ListOf
        ? []
        : fieldsOf(entry, `${prefix}${key}.`),
  );
}

/** `options` checked against `schema` (errors under `origin`) and defaulted, without the fields left unset. */
export function resolveOptions(options: object, schema: Schema, origin: string): Resolved {
  validate(options, schema, origin);
  return Object.fromEntries(
    Object.entries(resolve(options as Resolved, schema)).filter(([, value]) => value !== undefined),
  );
}
