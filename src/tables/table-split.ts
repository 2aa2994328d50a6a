// A table's rows in two named parts (data/split-indices.ts says which go
// where). Each part keeps the file's row order.
import { firebrandError } from '../errors';
import { splitFractions, type SplitFractions } from '../data/split-fractions';
import { randomSplitIndices, splitIndicesBy } from '../data/split-indices';
import type { Cell } from '../preprocessing/column-statistics';
import type { Table } from './table';

export type TableSplitOptions = SplitFractions & {
  /** Splits each value of this column (a label) alone, so that both parts hold it in the split's proportion. */
  stratify?: string;
  /** Keeps the rows of each value of this column (a patient, a user) together in one part. */
  groups?: string;
};

/** A column's cells as values to split by (null where missing). */
function valuesOf(table: Table, name: string): Cell[] {
  const column = table.column(name);
  return column instanceof Float64Array ? Array.from(column, (value) => (Number.isNaN(value) ? null : value)) : column;
}

export function splitTable(table: Table, options: TableSplitOptions): { train: Table; validation: Table } {
  const fractions = splitFractions(options);
  const seed = options.seed ?? 42;
  if (options.stratify !== undefined && options.groups !== undefined) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'split: give stratify or groups, not both');
  }
  const by = options.stratify ?? options.groups;
  const parts =
    by === undefined
      ? randomSplitIndices(table.numRows, fractions, seed)
      : splitIndicesBy(valuesOf(table, by), options.stratify !== undefined ? 'stratify' : 'groups', fractions, seed);
  const [train, validation] = parts.map((rows) => table.rows([...rows].sort((a, b) => a - b)));
  return { train, validation };
}
