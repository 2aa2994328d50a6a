// What Dataset's readers and batch transforms accept, with torchvision's and
// the readers' defaults: the one owner of their rules. C++ reads the files and
// runs the transforms with the resolved values.
import {
  boolean,
  either,
  field,
  integer,
  listOf,
  number,
  oneOf,
  REQUIRED,
  Rule,
  Schema,
  text,
  Variants,
} from '../options/schema';

/** A number, or a non-empty list of them, each at least `min` (above it with `above`). */
const numbers =
  (min: number, above = false): Rule =>
  (value) =>
    number(min, Infinity, above)(value) === undefined ||
    (Array.isArray(value) &&
      value.length > 0 &&
      value.every((item) => number(min, Infinity, above)(item) === undefined))
      ? undefined
      : `a number ${above ? '>' : '>='} ${min} or a non-empty list of them`;

const anyNumbers: Rule = (value) =>
  typeof value === 'number' && Number.isFinite(value)
    ? undefined
    : Array.isArray(value) &&
        value.length > 0 &&
        value.every((item) => typeof item === 'number' && Number.isFinite(item))
      ? undefined
      : 'a number or a non-empty list of numbers';

const cropSize: Rule = (value) =>
  integer(1)(value) === undefined ||
  (Array.isArray(value) && value.length === 2 && value.every((size) => integer(1)(size) === undefined))
    ? undefined
    : 'an integer >= 1 or a list of 2';

const shape: Rule = (value) =>
  Array.isArray(value) && value.length > 0 && value.every((size) => integer(1)(size) === undefined)
    ? undefined
    : 'a non-empty list of integers >= 1';

const onInput = field(text, 'input', ['input']);

export const transformSchemas = new Variants('transform', {
  normalize: {
    mean: field(anyNumbers, REQUIRED, [0.5, [0.1]]),
    std: field(numbers(0, true), REQUIRED, [0.25, [1]]),
    field: onInput,
  },
  cast: {
    dtype: field(oneOf('float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'uint8'), 'float32', ['float64']),
    field: onInput,
  },
  randomHorizontalFlip: { p: field(number(0, 1), 0.5, [0, 1]), field: onInput },
  randomCrop: { size: field(cropSize, REQUIRED, [1, [1, 1]]), padding: field(integer(0), 0, [0, 1]), field: onInput },
  oneHot: { numClasses: field(integer(1), REQUIRED, [2]), field: field(text, 'target', ['target']) },
});

export const idxOptionsSchema: Schema = {
  scaleBytes: field(boolean, true, [false]),
  mean: field(number(-Infinity), undefined, [0.5]),
  std: field(number(0, Infinity, true), undefined, [0.25]),
  sampleShape: field(shape, undefined, [[4]]),
};

export const csvOptionsSchema: Schema = {
  labelColumn: field(either(text, integer(0)), undefined, [0, 'label']),
  delimiter: field(oneOf(',', ';', '\t', '|', ' '), ',', [',']),
  header: field(boolean, true, [true]),
  targets: field(oneOf('class', 'value'), 'class', ['value']),
  columns: field(listOf(), undefined, [['a']]),
};
