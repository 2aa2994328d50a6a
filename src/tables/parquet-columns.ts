// A Parquet file's (or row group's) scalar columns as a table's columns, typed
// by the file's schema rather than guessed from text: number columns become
// numbers (NaN: null), text and enum columns text (null: missing), booleans
// 'true'/'false', dates and timestamps ISO 8601 text, as pandas.read_parquet keeps a string
// column of digits as strings. Nested and binary columns are refused, naming
// them, unless left out with `columns`.
import { firebrandError } from '../errors';
import { didYouMean } from '../options/closest-match';
import type { ParquetColumnKind, ParquetFile, ParquetRowGroup } from '../io/parquet-file';
import type { TableColumn } from './table-cells';

/**
 * The names of `wanted` (all columns when undefined), checked: a name the file lacks is an error naming the
 * closest and the columns it has.
 */
export function parquetColumnNames(parquet: ParquetFile, wanted?: string[]): string[] {
  const names = parquet.columns.map((column) => column.name);
  if (wanted !== undefined && (!Array.isArray(wanted) || wanted.some((name) => typeof name !== 'string'))) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `Table.fromParquet: options.columns must be a list of column names, got ${JSON.stringify(wanted)}`,
    );
  }
  for (const name of wanted ?? []) {
    if (!names.includes(name)) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${parquet.file}: no column '${name}'${didYouMean(name, names)}; the columns are ${names.join(', ')}`,
      );
    }
  }
  return wanted ?? names;
}

/** The columns of one row group, in the order of `names`. */
export function parquetColumns(parquet: ParquetFile, names: string[], group: ParquetRowGroup): TableColumn[] {
  const kinds = new Map(parquet.columns.map((column) => [column.name, column.kind]));
  return names.map((name) => {
    const kind = kinds.get(name) as ParquetColumnKind;
    const where = (row: number) => `${parquet.file}, row ${group.rowStart + row}`;
    if (kind === 'number') return numberColumn(group.rows, name, where);
    if (kind === 'text' || kind === 'boolean') return group.rows.map((row) => textCell(row[name]));
    if (kind === 'date' || kind === 'timestamp') return group.rows.map((row) => dateCell(row[name], kind));
    throw firebrandError(
      'ERR_FIREBRAND_DATA',
      `${parquet.file}: column '${name}' holds ${kind === 'nested' ? 'nested values (lists, structs or maps)' : 'binary values'}, which a table cannot; leave it out with the columns option`,
    );
  });
}

/** A number column's values; an infinite one, or an integer beyond 2^53, is refused, naming its row. */
function numberColumn(rows: Record<string, unknown>[], name: string, where: (row: number) => string): Float64Array {
  const column = new Float64Array(rows.length);
  rows.forEach((row, index) => {
    const value = row[name];
    if (value === null || value === undefined) {
      column[index] = NaN;
      return;
    }
    const number = Number(value);
    if (typeof value === 'bigint' && !Number.isSafeInteger(number)) {
      throw firebrandError(
        'ERR_FIREBRAND_DATA',
        `${where(index)}: column '${name}' holds ${value}, beyond the integers a float64 holds exactly (2^53)`,
      );
    }
    if (number === Infinity || number === -Infinity) {
      throw firebrandError(
        'ERR_FIREBRAND_DATA',
        `${where(index)}: column '${name}' holds ${number}, which is not a finite number; write a null for a missing value`,
      );
    }
    column[index] = number;
  });
  return column;
}

function textCell(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** A date as its ISO 8601 day ('2024-03-01'), a timestamp as ISO 8601 in UTC ('2024-03-01T12:30:00.000Z'). */
function dateCell(value: unknown, kind: 'date' | 'timestamp'): string | null {
  if (value === null || value === undefined) return null;
  if (!(value instanceof Date)) return String(value);
  const text = value.toISOString();
  return kind === 'date' ? text.slice(0, 10) : text;
}
