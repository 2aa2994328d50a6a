// A group of categorical columns as scikit-learn's Pipeline([SimpleImputer(
// strategy='most_frequent' or 'constant'), OneHotEncoder(handle_unknown) or
// OrdinalEncoder]) fits and transforms it. Categories are the training rows'
// distinct values, sorted (numbers by value, text by code point); without an
// imputer a missing value is a category of its own, last, as OneHotEncoder
// makes it. An index (OrdinalEncoder) feeds an embedding: an unseen category
// under 'ignore' takes the index after the last, one more embedding row.
import { firebrandError } from '../errors';
import { categoriesOf, type Cell, mostFrequent } from '../tables/column-statistics';
import { numberOf } from '../tables/table-cells';
import type { Table } from '../tables/table';

export interface CategoricalColumns {
  columns: string[];
  /** 'onehot' (OneHotEncoder: a 0/1 column per category) or 'index' (OrdinalEncoder: the category's index). Default 'onehot'. */
  encode?: 'onehot' | 'index';
  /** How a missing value is filled (SimpleImputer). Default: none, and missing is a category of its own. */
  impute?: 'most_frequent' | { constant: string | number };
  /** A category unseen in the training rows: 'error' (default, as scikit-learn's) or 'ignore' (all zeros; the extra index). */
  handleUnknown?: 'error' | 'ignore';
}

/** What fit learned from the training rows: each column's fill, categories and kind. */
export interface FittedCategorical {
  fill?: Cell[];
  categories: Cell[][];
  /**
   * Whether each column held numbers or text in the training rows: later rows are read the same way, so a
   * text category that looks like a number ('10') stays text whatever else a request holds. Saved
   * preprocessing without it: numbers where a category is one.
   */
  kinds?: ('number' | 'text')[];
}

/** A cell as a map key: the number 1 and the text '1' are different categories. */
const keyOf = (cell: Cell) => (cell === null ? 'null' : `${typeof cell}:${String(cell)}`);

/** A column's cells: numbers for a numeric column (null: missing), its texts as given otherwise. */
function cellsOf(table: Table, name: string, numeric: boolean): Cell[] {
  const column = table.column(name);
  return numeric && column instanceof Float64Array
    ? Array.from(column, (value) => (Number.isNaN(value) ? null : value))
    : [...table.textsOf(name)];
}

/** The cells with missing ones filled, a text read as a number in a column of numbers. */
function filledCells(group: CategoricalColumns, table: Table, fill: Cell[] | undefined, numeric: boolean[]): Cell[][] {
  return group.columns.map((name, i) =>
    cellsOf(table, name, numeric[i]).map((cell) => {
      const filled = cell === null && fill !== undefined ? fill[i] : cell;
      return numeric[i] && typeof filled === 'string' ? (numberOf(filled) ?? filled) : filled;
    }),
  );
}

export function fitCategorical(group: CategoricalColumns, table: Table): FittedCategorical {
  const kinds = group.columns.map((name) => table.kindOf(name));
  const numeric = kinds.map((kind) => kind === 'number');
  const raw = filledCells(group, table, undefined, numeric);
  const impute = group.impute;
  const fill =
    impute === undefined
      ? undefined
      : raw.map((cells) =>
          typeof impute === 'object' ? impute.constant : mostFrequent(cells.filter((cell) => cell !== null)),
        );
  return { fill, categories: filledCells(group, table, fill, numeric).map(categoriesOf), kinds };
}

/** The group's output columns: one 0/1 column per category of each column (onehot), or one index column each. */
/** Told of each cell handleUnknown: 'ignore' encoded as none of the categories (its column and value). */
export type UnknownCategoryListener = (column: string, value: string | number | null) => void;

export function transformCategorical(
  group: CategoricalColumns,
  fitted: FittedCategorical,
  table: Table,
  onUnknownCategory?: UnknownCategoryListener,
): Float64Array[] {
  const numeric = fitted.categories.map((categories, i) =>
    fitted.kinds ? fitted.kinds[i] === 'number' : categories.some((category) => typeof category === 'number'),
  );
  const cells = filledCells(group, table, fitted.fill, numeric);
  const outputs: Float64Array[] = [];
  group.columns.forEach((name, i) => {
    const categories = fitted.categories[i];
    const known = new Map(categories.map((category, index) => [keyOf(category), index]));
    const indices = cells[i].map((cell, row) => {
      const index = known.get(keyOf(cell)) ?? -1;
      if (index < 0 && group.handleUnknown !== 'ignore') {
        throw firebrandError(
          'ERR_FIREBRAND_DATA',
          `${table.where(row)}: column '${name}' holds ${JSON.stringify(cell)}, a category unseen in the training rows ` +
            `(known: ${categories.map((category) => JSON.stringify(category)).join(', ')}); handleUnknown: 'ignore' encodes it as none of them`,
        );
      }
      if (index < 0) onUnknownCategory?.(name, cell);
      return index < 0 ? categories.length : index;
    });
    if (group.encode === 'index') {
      outputs.push(Float64Array.from(indices));
      return;
    }
    for (let k = 0; k < categories.length; k++)
      outputs.push(Float64Array.from(indices, (index) => (index === k ? 1 : 0)));
  });
  return outputs;
}

/** sklearn's get_feature_names_out: "<column>_<category>" (onehot; a missing one "nan", as pandas reads it) or the column (index). */
export function categoricalNames(group: CategoricalColumns, fitted: FittedCategorical): string[] {
  if (group.encode === 'index') return [...group.columns];
  return group.columns.flatMap((name, i) =>
    fitted.categories[i].map((category) => `${name}_${category === null ? 'nan' : String(category)}`),
  );
}
