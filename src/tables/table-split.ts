// A table's rows in two named parts. Which rows go where is what
// torch.utils.data.random_split gives with a generator seeded `seed` (as
// Dataset.split): over the rows, over each label's rows (stratified), or over
// the groups (grouped: a group's rows stay together). Each part keeps the
// file's row order.
import { firebrandError } from '../errors';
import { native } from '../native';
import { splitFractions, type SplitFractions } from '../data/split-fractions';
import { categoriesOf, type Cell } from '../preprocessing/column-statistics';
import type { Table } from './table';

export type TableSplitOptions = SplitFractions & {
  /** Splits each value of this column (a label) alone, so that both parts hold it in the split's proportion. */
  stratify?: string;
  /** Keeps the rows of each value of this column (a patient, a user) together in one part. */
  groups?: string;
};

/** random_split's [train, validation] indices of `count` items. */
function randomSplit(count: number, fractions: [number, number], seed: number): [number[], number[]] {
  const items = native.NativeDataset.fromFields({
    item: { data: Float64Array.from({ length: count }, (_, i) => i), shape: [count] },
  });
  const parts = items.split(fractions[0], fractions[1], seed);
  return parts.map((part) => Array.from(part.fields().item.data as Float64Array)) as [number[], number[]];
}

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
  const parts: [number[], number[]] = [[], []];
  const by = options.stratify ?? options.groups;
  if (by === undefined) {
    const [train, validation] = randomSplit(table.numRows, fractions, seed);
    parts[0].push(...train);
    parts[1].push(...validation);
  } else {
    const values = valuesOf(table, by);
    const rowsOf = new Map<Cell, number[]>();
    values.forEach((value, row) => rowsOf.set(value, [...(rowsOf.get(value) ?? []), row]));
    const keys = categoriesOf(values);
    if (options.stratify !== undefined) {
      for (const key of keys) {
        const rows = rowsOf.get(key) as number[];
        randomSplit(rows.length, fractions, seed).forEach((indices, part) =>
          parts[part].push(...indices.map((i) => rows[i])),
        );
      }
    } else {
      randomSplit(keys.length, fractions, seed).forEach((indices, part) =>
        parts[part].push(...indices.flatMap((i) => rowsOf.get(keys[i]) as number[])),
      );
    }
  }
  const [train, validation] = parts.map((rows) => table.rows(rows.sort((a, b) => a - b)));
  return { train, validation };
}
