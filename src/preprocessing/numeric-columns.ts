// A group of numeric columns as scikit-learn's Pipeline([SimpleImputer(strategy,
// add_indicator), StandardScaler() or MinMaxScaler()]) fits and transforms it:
// missing values filled with a statistic of the training rows, a 0/1 indicator
// appended for each column that had missing values there, then every output
// column (the indicators too) scaled with the training rows' statistics.
import { firebrandError } from '../errors';
import { mean, median, mostFrequent } from '../tables/column-statistics';
import { infiniteCellError, numberOf } from '../tables/table-cells';
import type { Table } from '../tables/table';

export type NumericImpute = 'mean' | 'median' | 'most_frequent' | { constant: number };

export interface NumericColumns {
  columns: string[];
  /** How a missing value is filled (SimpleImputer's strategy). Default: none, and a missing value is an error. */
  impute?: NumericImpute;
  /** Appends a 0/1 column for each column that had missing values in the training rows (add_indicator). */
  indicator?: boolean;
  /** 'standard' (StandardScaler: mean 0, variance 1), 'minmax' (MinMaxScaler: [0, 1]) or 'none'. Default 'standard'. */
  scale?: 'standard' | 'minmax' | 'none';
}

/** What fit learned from the training rows. */
export interface FittedNumeric {
  fill?: number[];
  /** The columns that get an indicator. */
  indicated: string[];
  /** standard: (x - shift) / divide; minmax: x * multiply + add (sklearn's scale_ and min_). */
  scaling?: { shift: number[]; divide: number[] } | { multiply: number[]; add: number[] };
}

/** A column's values as numbers (NaN: missing); a cell that is not a number is named. */
export function numbersOf(table: Table, name: string): Float64Array {
  const column = table.column(name);
  if (column instanceof Float64Array) return column;
  return Float64Array.from(column, (cell, row) => {
    if (cell === null) return NaN;
    const value = numberOf(cell);
    if (value === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_DATA',
        `${table.where(row)}: column '${name}' holds ${JSON.stringify(cell)}, not a number (it is in a numeric group)`,
      );
    }
    if (!Number.isFinite(value)) throw infiniteCellError(table.where(row), name, cell);
    return value;
  });
}

export function fitNumeric(group: NumericColumns, table: Table): FittedNumeric {
  const columns = group.columns.map((name) => numbersOf(table, name));
  let fill: number[] | undefined;
  if (group.impute !== undefined) {
    const impute = group.impute;
    fill = columns.map((values, i) => {
      const present = Array.from(values).filter((value) => !Number.isNaN(value));
      if (present.length === 0) {
        throw firebrandError(
          'ERR_FIREBRAND_DATA',
          `${table.source()}: column '${group.columns[i]}' has no value in the ${table.numRows} training rows to impute from`,
        );
      }
      if (typeof impute === 'object') return impute.constant;
      return impute === 'mean'
        ? mean(present)
        : impute === 'median'
          ? median(present)
          : (mostFrequent(present) as number);
    });
  }
  const indicated = group.indicator ? group.columns.filter((_, i) => columns[i].some(Number.isNaN)) : [];
  const fitted: FittedNumeric = { fill, indicated };
  const outputs = imputed(group, fitted, table, columns);
  if (group.scale === 'minmax') {
    const lows = outputs.map((values) => values.reduce((low, value) => Math.min(low, value), Infinity));
    const highs = outputs.map((values) => values.reduce((high, value) => Math.max(high, value), -Infinity));
    // MinMaxScaler's _handle_zeros_in_scale: a range under 10 eps scales by 1.
    const multiply = lows.map((low, i) => (highs[i] - low < 10 * Number.EPSILON ? 1 : 1 / (highs[i] - low)));
    fitted.scaling = { multiply, add: lows.map((low, i) => -low * multiply[i]) };
  } else if (group.scale !== 'none') {
    const shift = outputs.map((values) => mean(Array.from(values)));
    const divide = outputs.map((values, i) => {
      const variance = mean(Array.from(values, (value) => (value - shift[i]) ** 2));
      // StandardScaler's _is_constant_feature: a variance within rounding error of 0 scales by 1.
      const n = values.length;
      const roundingBound = n * Number.EPSILON * variance + (n * shift[i] * Number.EPSILON) ** 2;
      return variance <= roundingBound ? 1 : Math.sqrt(variance);
    });
    fitted.scaling = { shift, divide };
  }
  return fitted;
}

/** The group's output columns for `table`'s rows. */
export function transformNumeric(group: NumericColumns, fitted: FittedNumeric, table: Table): Float64Array[] {
  const outputs = imputed(
    group,
    fitted,
    table,
    group.columns.map((name) => numbersOf(table, name)),
  );
  const scaling = fitted.scaling;
  if (scaling === undefined) return outputs;
  return outputs.map((values, i) =>
    'shift' in scaling
      ? values.map((value) => (value - scaling.shift[i]) / scaling.divide[i])
      : values.map((value) => value * scaling.multiply[i] + scaling.add[i]),
  );
}

/** sklearn's get_feature_names_out under the group's name: the columns, then "missingindicator_<column>". */
export function numericNames(group: NumericColumns, fitted: FittedNumeric): string[] {
  return [...group.columns, ...fitted.indicated.map((name) => `missingindicator_${name}`)];
}

/** The columns with their missing values filled, then the indicators. */
function imputed(group: NumericColumns, fitted: FittedNumeric, table: Table, columns: Float64Array[]): Float64Array[] {
  const filled = columns.map((values, i) =>
    values.map((value, row) => {
      if (!Number.isNaN(value)) return value;
      if (fitted.fill === undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_DATA',
          `${table.where(row)}: column '${group.columns[i]}' is missing a value, and nothing imputes it (a TablePreprocessor's numeric group does, with impute: 'mean', 'median', 'most_frequent' or { constant })`,
        );
      }
      return fitted.fill[i];
    }),
  );
  const indicators = fitted.indicated.map((name) =>
    columns[group.columns.indexOf(name)].map((value) => (Number.isNaN(value) ? 1 : 0)),
  );
  return [...filled, ...indicators];
}
