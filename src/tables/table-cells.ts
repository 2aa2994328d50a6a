// Where a table's rows came from, and how cells become typed columns: numbers
// where every present cell is one (numeric text, as a CSV gives it), text
// otherwise; an infinite number is refused, naming where it is.
import { firebrandError } from '../errors';

/** A column of numbers (NaN: missing) or of text (null: missing). */
export type TableColumn = Float64Array | (string | null)[];

/**
 * Where a table's rows came from, for errors: a CSV file's lines, a Parquet file's rows (`unit: 'row'`,
 * counted from 0), records, or rows each named ("a.parquet, row 3", "records[7]") of files or picked records.
 */
export type TableOrigin = FileOrigin | { records: string } | { rowsOf: string; places: string[] };
export type FileOrigin = { file: string; lines: number[]; unit?: 'row' };

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INFINITY = /^[+-]?(inf|infinity)$/i;

/** Where row `row` of a table from `origin` came from: "file.csv, line 7", "file.parquet, row 6" or "records[3]". */
export function whereIn(origin: TableOrigin, row: number): string {
  if ('file' in origin) return `${origin.file}, ${origin.unit ?? 'line'} ${origin.lines[row]}`;
  return 'rowsOf' in origin ? origin.places[row] : `${origin.records}[${row}]`;
}

/** Where the rows at `indices` of a table from `origin` came from. */
export function originOf(origin: TableOrigin, indices: ArrayLike<number>): TableOrigin {
  if ('file' in origin) return { ...origin, lines: Array.from(indices, (i) => origin.lines[i]) };
  if ('rowsOf' in origin) return { ...origin, places: Array.from(indices, (i) => origin.places[i]) };
  return { rowsOf: origin.records, places: Array.from(indices, (i) => whereIn(origin, i)) };
}

/**
 * A cell's number (surrounding spaces allowed), or undefined when it is text. Infinite ones ("inf", "1e400")
 * come back as ±Infinity, which no column may hold: the caller refuses them, naming the row.
 */
export function numberOf(cell: string): number | undefined {
  const text = cell.trim();
  if (NUMBER.test(text)) return Number(text);
  if (INFINITY.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  return undefined;
}

/** The error for a cell that reads as an infinite number, naming where it is. */
export function infiniteCellError(where: string, column: string, cell: string): Error {
  return firebrandError(
    'ERR_FIREBRAND_DATA',
    `${where}: column '${column}' holds ${JSON.stringify(cell)}, which is not a finite number (it reads as ` +
      `${String(numberOf(cell))}); give a finite value, or leave the cell empty for a missing value`,
  );
}

/** A record's field as a text cell (null: missing); a value that is not a scalar is refused, naming it. */
export function recordCell(value: unknown, origin: TableOrigin, row: number, column: string): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number') return Number.isNaN(value) ? null : String(value);
  if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  const kind = Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  let shown = '';
  try {
    const json = typeof value === 'object' ? JSON.stringify(value) : undefined;
    if (json !== undefined) shown = ` (${json.length > 60 ? `${json.slice(0, 57)}...` : json})`;
  } catch {
    // a cycle: the kind says enough
  }
  throw firebrandError(
    'ERR_FIREBRAND_DATA',
    `${whereIn(origin, row)}: field '${column}' is ${kind}${shown}; expected a number, a text, a boolean or null (missing)`,
  );
}

/** Columns typed one by one: numbers where every present cell is one, text otherwise; an infinite number is refused. */
export function columnsOf(names: string[], cells: (string | null)[][], origin: TableOrigin): Map<string, TableColumn> {
  const columns = new Map<string, TableColumn>();
  names.forEach((name, index) => {
    const values = cells[index];
    const numbers = values.map((cell) => (cell === null ? NaN : numberOf(cell)));
    if (!numbers.every((value) => value !== undefined)) {
      columns.set(name, values);
      return;
    }
    const infinite = numbers.findIndex((value) => value === Infinity || value === -Infinity);
    if (infinite >= 0) throw infiniteCellError(whereIn(origin, infinite), name, values[infinite] as string);
    columns.set(name, Float64Array.from(numbers as number[]));
  });
  return columns;
}
