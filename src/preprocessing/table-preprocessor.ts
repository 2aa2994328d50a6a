// The preprocessing of a table, fitted on the training rows only and saved with
// the model, as scikit-learn's ColumnTransformer of imputers, scalers and
// encoders fits and transforms it. Its output is a Dataset's fields: `input`
// (float32: the numeric groups, the datetime ones, then the one-hot ones), `categories` (int64:
// the index-encoded columns, for embeddings) and `target`.
import { firebrandError } from '../errors';
import type { TensorFields } from '../native';
import { resolveOptions } from '../options/schema';
import { boolean, either, field, listOf, oneOf, REQUIRED, type Rule, type Schema } from '../options/schema';
import { categoriesOf, type Cell } from '../tables/column-statistics';
import {
  categoricalNames,
  fitCategorical,
  transformCategorical,
  type UnknownCategoryListener,
  type CategoricalColumns,
  type FittedCategorical,
} from './categorical-columns';
import {
  DATETIME_PARTS,
  DEFAULT_DATETIME_PARTS,
  datetimeNames,
  fitDatetime,
  transformDatetime,
  type DatetimeColumns,
  type FittedDatetime,
} from './datetime-columns';
import {
  fitNumeric,
  numbersOf,
  numericNames,
  transformNumeric,
  type FittedNumeric,
  type NumericColumns,
} from './numeric-columns';
import type { Table } from '../tables/table';

export type { CategoricalColumns, DatetimeColumns, NumericColumns };

export interface TargetColumn {
  column: string;
  /**
   * 'class': each label's index among the training rows' sorted labels (LabelEncoder), int64; 'index': whole
   * numbers that are class indices already, int64; 'value': float32 (regression). Default 'class'.
   */
  kind?: 'class' | 'index' | 'value';
  /**
   * For kind 'value': 'standard' trains on (y - mean) / std of the training targets (scikit-learn's
   * TransformedTargetRegressor with a StandardScaler); predict and the exported ONNX file give y in its own
   * units again. Default 'none'.
   */
  scale?: 'standard' | 'none';
}

/** A regression target's standardization, as StandardScaler's mean_ and scale_ (population std; 0 read as 1). */
export interface TargetScaling {
  mean: number;
  scale: number;
}

export interface TablePreprocessorSpec {
  /** Numeric columns: imputed, with indicators, and scaled (sklearn's num pipeline). */
  numeric?: NumericColumns | NumericColumns[];
  /** Categorical columns: imputed and encoded one-hot or as indices. */
  categorical?: CategoricalColumns | CategoricalColumns[];
  /** Date/time columns (ISO 8601 text): their year standardized, their cyclic parts as sine and cosine. */
  datetime?: DatetimeColumns | DatetimeColumns[];
  /** The target column, by name (a class label unless kind says 'value'). */
  target?: string | TargetColumn;
}

const FORMAT = 'firebrand-table-preprocessor';

/** A TablePreprocessor as saved (toJSON): its spec and what fit learned. */
export interface SavedTablePreprocessor {
  format: typeof FORMAT;
  formatVersion: 1;
  numeric: { columns: Required<NumericColumns>; fitted: FittedNumeric }[];
  categorical: { columns: Required<CategoricalColumns>; fitted: FittedCategorical }[];
  /** Absent in files saved before datetime groups. */
  datetime?: { columns: Required<DatetimeColumns>; fitted: FittedDatetime }[];
  target?: {
    column: string;
    kind: 'class' | 'index' | 'value';
    classes?: Cell[];
    scale?: 'standard' | 'none';
    scaling?: TargetScaling;
  };
}

const columnList: Rule = (value) =>
  Array.isArray(value) && value.length > 0 && value.every((name) => typeof name === 'string' && name.length > 0)
    ? undefined
    : 'a non-empty list of column names';
const constant =
  (...kinds: string[]): Rule =>
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).join() === 'constant' &&
    kinds.includes(typeof (value as { constant: unknown }).constant)
      ? undefined
      : `{ constant: <${kinds.join(' or ')}> }`;

const numericSchema: Schema = {
  columns: field(columnList, REQUIRED),
  impute: field(either(oneOf('mean', 'median', 'most_frequent'), constant('number')), undefined),
  indicator: field(boolean, false),
  scale: field(oneOf('standard', 'minmax', 'none'), 'standard'),
};
const categoricalSchema: Schema = {
  columns: field(columnList, REQUIRED),
  encode: field(oneOf('onehot', 'index'), 'onehot'),
  impute: field(either(oneOf('most_frequent'), constant('string', 'number')), undefined),
  handleUnknown: field(oneOf('error', 'ignore'), 'error'),
};

const datetimeParts: Rule = (value) =>
  listOf(...DATETIME_PARTS)(value) ??
  ((value as string[]).length > 0 && new Set(value as string[]).size === (value as string[]).length
    ? undefined
    : `a non-empty list of distinct parts: ${DATETIME_PARTS.join(', ')}`);
const datetimeSchema: Schema = {
  columns: field(columnList, REQUIRED),
  parts: field(datetimeParts, DEFAULT_DATETIME_PARTS),
};

const listed = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

export class TablePreprocessor {
  private readonly numeric: Required<NumericColumns>[];
  private readonly categorical: Required<CategoricalColumns>[];
  private readonly datetime: Required<DatetimeColumns>[];
  private readonly target?: Required<TargetColumn>;
  private fitted?: {
    numeric: FittedNumeric[];
    categorical: FittedCategorical[];
    datetime: FittedDatetime[];
    classes?: Cell[];
    scaling?: TargetScaling;
  };

  constructor(spec: TablePreprocessorSpec) {
    const known = ['numeric', 'categorical', 'datetime', 'target'];
    for (const key of Object.keys(spec ?? {})) {
      if (!known.includes(key)) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `TablePreprocessor: unknown field '${key}'; the fields are ${known.join(', ')}`,
        );
      }
    }
    this.numeric = listed(spec.numeric).map(
      (group, i) => resolveOptions(group, numericSchema, `TablePreprocessor.numeric[${i}]`) as Required<NumericColumns>,
    );
    this.categorical = listed(spec.categorical).map(
      (group, i) =>
        resolveOptions(group, categoricalSchema, `TablePreprocessor.categorical[${i}]`) as Required<CategoricalColumns>,
    );
    this.datetime = listed(spec.datetime).map(
      (group, i) =>
        resolveOptions(group, datetimeSchema, `TablePreprocessor.datetime[${i}]`) as Required<DatetimeColumns>,
    );
    if (spec.target !== undefined) {
      const target = typeof spec.target === 'string' ? { column: spec.target } : spec.target;
      this.target = { column: target.column, kind: target.kind ?? 'class', scale: target.scale ?? 'none' };
      const scaled = this.target.scale === 'standard' && this.target.kind === 'value';
      if (
        typeof this.target.column !== 'string' ||
        !['class', 'index', 'value'].includes(this.target.kind) ||
        !(this.target.scale === 'none' || scaled)
      ) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `TablePreprocessor.target: expected a column name or { column, kind: 'class' | 'index' | 'value', scale?: 'standard' | 'none' (kind 'value' only) }, got ${JSON.stringify(spec.target)}`,
        );
      }
    }
    const columns = this.columns;
    const twice = columns.find((name, i) => columns.indexOf(name) !== i);
    if (twice !== undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `TablePreprocessor: column '${twice}' is in two groups`);
    }
  }

  /** A preprocessor as toJSON saved it, fitted. */
  static fromJSON(saved: SavedTablePreprocessor): TablePreprocessor {
    if (saved?.format !== FORMAT || saved.formatVersion !== 1) {
      throw firebrandError(
        'ERR_FIREBRAND_FILE',
        `TablePreprocessor.fromJSON: not a ${FORMAT} v1 (format ${String(saved?.format)})`,
      );
    }
    const preprocessor = new TablePreprocessor({
      numeric: saved.numeric.map((group) => group.columns),
      categorical: saved.categorical.map((group) => group.columns),
      datetime: (saved.datetime ?? []).map((group) => group.columns),
      target: saved.target && { column: saved.target.column, kind: saved.target.kind, scale: saved.target.scale },
    });
    preprocessor.fitted = {
      numeric: saved.numeric.map((group) => group.fitted),
      categorical: saved.categorical.map((group) => group.fitted),
      datetime: (saved.datetime ?? []).map((group) => group.fitted),
      classes: saved.target?.classes,
      scaling: saved.target?.scaling,
    };
    return preprocessor;
  }

  /** Learns the statistics, categories and classes from the training rows (and nothing else): returns this. */
  fit(table: Table): this {
    this.checkColumns(table, true);
    for (const name of this.columns) warnIfMostlyMissing(table, name);
    this.fitted = {
      numeric: this.numeric.map((group) => fitNumeric(group, table)),
      categorical: this.categorical.map((group) => fitCategorical(group, table)),
      datetime: this.datetime.map((group) => fitDatetime(group, table)),
      classes: this.target?.kind === 'class' ? categoriesOf(this.targetCells(table)) : undefined,
      scaling: this.target?.scale === 'standard' ? standardScaling(this.targetCells(table) as number[]) : undefined,
    };
    return this;
  }

  /**
   * The feature fields of `table`'s rows: `input` (float32 [rows, features]) and `categories` (int64), as
   * present. `onUnknownCategory` is told of each cell handleUnknown: 'ignore' encodes as none of the categories.
   */
  transform(table: Table, onUnknownCategory?: UnknownCategoryListener): TensorFields {
    const fitted = this.fittedState('transform');
    this.checkColumns(table, false);
    const floats = [
      ...this.numeric.flatMap((group, i) => transformNumeric(group, fitted.numeric[i], table)),
      ...this.datetime.flatMap((group, i) => transformDatetime(group, fitted.datetime[i], table)),
      ...this.categorical.flatMap((group, i) =>
        group.encode === 'onehot' ? transformCategorical(group, fitted.categorical[i], table, onUnknownCategory) : [],
      ),
    ];
    const indices = this.categorical.flatMap((group, i) =>
      group.encode === 'index' ? transformCategorical(group, fitted.categorical[i], table, onUnknownCategory) : [],
    );
    const fields: TensorFields = {};
    const rows = table.numRows;
    if (floats.length > 0)
      fields.input = { data: interleaved(floats, rows, Float32Array), shape: [rows, floats.length] };
    if (indices.length > 0) {
      const data = interleaved(indices, rows, Float64Array);
      fields.categories = { data: BigInt64Array.from(data, (value) => BigInt(value)), shape: [rows, indices.length] };
    }
    return fields;
  }

  /** The features and the target of `table`'s rows: a Dataset's fields (Dataset.fromTable builds it). */
  transformWithTarget(table: Table): TensorFields {
    const fields = this.transform(table);
    if (this.target === undefined) return fields;
    const cells = this.targetCells(table);
    if (this.target.kind === 'value') {
      const { mean, scale } = this.fittedState('transform').scaling ?? { mean: 0, scale: 1 };
      fields.target = { data: Float32Array.from(cells as number[], (y) => (y - mean) / scale), shape: [table.numRows] };
      return fields;
    }
    if (this.target.kind === 'index') {
      fields.target = {
        data: BigInt64Array.from(cells, (label, row) => BigInt(this.classIndex(table, row, label))),
        shape: [table.numRows],
      };
      return fields;
    }
    const classes = this.fittedState('transform').classes as Cell[];
    const index = new Map(classes.map((label, i) => [label, i]));
    fields.target = {
      data: BigInt64Array.from(cells, (label, row) => {
        const found = index.get(label);
        if (found === undefined) {
          throw firebrandError(
            'ERR_FIREBRAND_DATA',
            `${table.where(row)}: target column '${this.target?.column}' holds ${JSON.stringify(label)}, a class unseen in the training rows (known: ${classes.map((c) => JSON.stringify(c)).join(', ')})`,
          );
        }
        return BigInt(found);
      }),
      shape: [table.numRows],
    };
    return fields;
  }

  /** The names of each field's columns, as sklearn's get_feature_names_out: "num__age", "cat__sex_female". */
  get featureNames(): Record<string, string[]> {
    const fitted = this.fittedState('featureNames');
    const prefixed = (kind: string, count: number, i: number, names: string[]) =>
      names.map((name) => `${kind}${count > 1 ? i : ''}__${name}`);
    const input = [
      ...this.numeric.flatMap((group, i) =>
        prefixed('num', this.numeric.length, i, numericNames(group, fitted.numeric[i])),
      ),
      ...this.datetime.flatMap((group, i) => prefixed('dt', this.datetime.length, i, datetimeNames(group))),
      ...this.categorical.flatMap((group, i) =>
        group.encode === 'onehot'
          ? prefixed('cat', this.categorical.length, i, categoricalNames(group, fitted.categorical[i]))
          : [],
      ),
    ];
    const categories = this.categorical.flatMap((group, i) =>
      group.encode === 'index'
        ? prefixed('cat', this.categorical.length, i, categoricalNames(group, fitted.categorical[i]))
        : [],
    );
    return { ...(input.length > 0 ? { input } : {}), ...(categories.length > 0 ? { categories } : {}) };
  }

  /** The feature columns the groups take, in order (not the target). */
  get columns(): string[] {
    return [...this.numeric, ...this.datetime, ...this.categorical].flatMap((group) => group.columns);
  }

  /** A regression target's standardization (scale: 'standard'), once fitted: predictions are y * scale + mean. */
  get targetScaling(): TargetScaling | undefined {
    return this.fitted?.scaling;
  }

  /** The target's classes, in index order (LabelEncoder's classes_), once fitted. */
  get classes(): Cell[] | undefined {
    return this.fitted?.classes;
  }

  /** The spec and what fit learned, as JSON (saved with the model). */
  toJSON(): SavedTablePreprocessor {
    const fitted = this.fittedState('toJSON');
    return {
      format: FORMAT,
      formatVersion: 1,
      numeric: this.numeric.map((columns, i) => ({ columns, fitted: fitted.numeric[i] })),
      categorical: this.categorical.map((columns, i) => ({ columns, fitted: fitted.categorical[i] })),
      ...(this.datetime.length > 0
        ? { datetime: this.datetime.map((columns, i) => ({ columns, fitted: fitted.datetime[i] })) }
        : {}),
      ...(this.target
        ? {
            target: {
              ...this.target,
              ...(fitted.classes ? { classes: fitted.classes } : {}),
              ...(fitted.scaling ? { scaling: fitted.scaling } : {}),
            },
          }
        : {}),
    };
  }

  private fittedState(operation: string) {
    if (this.fitted === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        `TablePreprocessor.${operation}: fit it on the training rows first`,
      );
    }
    return this.fitted;
  }

  /** Every column the groups name (and the target, when fitting) is in `table`; a missing one is named. */
  private checkColumns(table: Table, withTarget: boolean): void {
    for (const name of this.columns) table.column(name);
    if (withTarget && this.target) table.column(this.target.column);
  }

  /** A label that is a class index already: a whole number >= 0, else named with its row. */
  private classIndex(table: Table, row: number, label: Cell): number {
    if (typeof label !== 'number' || !Number.isInteger(label) || label < 0) {
      throw firebrandError(
        'ERR_FIREBRAND_DATA',
        `${table.where(row)}: target column '${this.target?.column}' holds ${JSON.stringify(label)}, not a class index (a whole number >= 0); kind 'class' encodes any labels`,
      );
    }
    return label;
  }

  /** The target's cells: numbers for 'value' (and for a numeric class column), texts otherwise; none may be missing. */
  private targetCells(table: Table): Cell[] {
    const target = this.target as Required<TargetColumn>;
    const numeric = target.kind !== 'class' || table.kindOf(target.column) === 'number';
    const cells: Cell[] = numeric
      ? Array.from(numbersOf(table, target.column))
      : [...(table.column(target.column) as (string | null)[])];
    cells.forEach((cell, row) => {
      if (cell === null || (typeof cell === 'number' && Number.isNaN(cell))) {
        throw firebrandError(
          'ERR_FIREBRAND_DATA',
          `${table.where(row)}: target column '${target.column}' is missing a value`,
        );
      }
    });
    return cells;
  }
}

/** StandardScaler's mean_ and scale_ of `values`: the population standard deviation, 0 read as 1. */
function standardScaling(values: number[]): TargetScaling {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length;
  const scale = Math.sqrt(variance);
  return { mean, scale: scale === 0 ? 1 : scale };
}

/** Columns as one row-major matrix of `rows` rows. */
function interleaved<T extends Float32Array | Float64Array>(
  columns: Float64Array[],
  rows: number,
  Kind: { new (length: number): T },
): T {
  const data = new Kind(rows * columns.length);
  columns.forEach((column, j) => {
    for (let row = 0; row < rows; row++) data[row * columns.length + j] = column[row];
  });
  return data;
}

/**
 * Warns when more than half of a feature column's training cells are missing, naming the tokens that made
 * them so: pandas' default na_values include 'None' and 'NA', which can be a category ("no damage"), and
 * imputation would then rewrite most rows without a word.
 */
function warnIfMostlyMissing(table: Table, name: string): void {
  const cells = table.textsOf(name);
  const missing = cells.reduce((count, cell) => count + (cell === null ? 1 : 0), 0);
  if (missing * 2 <= cells.length) return;
  const tokens = [...table.missingTokensOf(name)].sort((a, b) => b[1] - a[1]);
  const read =
    tokens.length > 0
      ? `; the cells ${tokens.map(([token, count]) => `${JSON.stringify(token)} (${count})`).join(', ')} read as missing`
      : '';
  process.emitWarning(
    `${table.source()}: column '${name}' is missing in ${missing} of ${cells.length} training rows${read}` +
      (tokens.some(([token]) => token !== '') ? "; if one of them is a value, give readCsv's naValues without it" : ''),
    { code: 'FIREBRAND_MOSTLY_MISSING' },
  );
}
