// A table of named columns as a CSV file or JSON records give it: each column
// numbers (Float64Array, NaN where a value is missing) or text (string, null
// where missing). It remembers where each row came from, so that an error
// names the file and line, or the record, at fault.
import { firebrandError } from '../errors';
import { didYouMean } from '../options/closest-match';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';
import { splitFractions, type SplitFractions } from './split-fractions';
import { randomSplitIndices, splitIndicesBy } from './split-indices';
import type { Cell } from './column-statistics';
import {
  columnsOf,
  originOf,
  recordCell,
  whereIn,
  type FileOrigin,
  type TableColumn,
  type TableOrigin,
} from './table-cells';
import { jsonLines } from '../io/json-lines';
import { ParquetFile } from '../io/parquet-file';
import { parquetColumnNames, parquetColumns } from './parquet-columns';

export type TableSplitOptions = SplitFractions & {
  /** Splits each value of this column (a label) alone, so that both parts hold it in the split's proportion. */
  stratify?: string;
  /** Keeps the rows of each value of this column (a patient, a user) together in one part. */
  groups?: string;
};

export type { TableColumn, TableOrigin } from './table-cells';

/** One row as a service receives it: values by column name; a missing or null field is a missing value. */
export type TableRecord = Record<string, string | number | boolean | null | undefined>;

export interface ReadJsonlOptions {
  /** The columns, in this order: a field outside them is an error naming it. Default every field seen. */
  columns?: string[];
}

export interface ReadParquetOptions {
  /** Only these columns, in this order (leave out nested or binary ones); a name the file lacks is an error. */
  columns?: string[];
}

const READ_PARQUET_OPTION_KEYS = optionKeys<ReadParquetOptions>()(['columns']);
const READ_JSONL_OPTION_KEYS = optionKeys<ReadJsonlOptions>()(['columns']);

export class Table {
  /** @internal */
  constructor(
    private readonly data: Map<string, TableColumn>,
    readonly numRows: number,
    private readonly origin: TableOrigin,
    // Each column's cells as given (text; null where missing): a column typed as numbers here reads as
    // text where the preprocessing was fitted on text ('10' next to 'X'). A number column a Parquet file
    // typed has its texts made when first asked for.
    private readonly texts: Map<string, (string | null)[]>,
    // By column: how many cells each missing-value token made missing (readCsv's naValues).
    private readonly missingTokens: Map<string, Map<string, number>> = new Map(),
  ) {}

  /**
   * A table of JSON records (what a service receives): a column per field name seen (or each of `columns`,
   * and then a field outside them is an error naming it), numbers where every present value is a number (or
   * a numeric text, as a CSV cell), text otherwise; a field missing from a record, null or '' is a missing
   * value.
   */
  static fromRecords(records: TableRecord[], name = 'records', columns?: string[]): Table {
    if (!Array.isArray(records)) {
      throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `${name}: expected an array of records (objects)`);
    }
    return Table.ofRecords(records, { records: name }, columns);
  }

  /**
   * A JSON Lines file of records (pandas.read_json(lines=True)), a record a line, streamed (or several
   * files', one after another: a split's shards); typed as fromRecords. Blank lines are skipped; errors
   * name the file and line.
   */
  static async fromJsonl(files: string | string[], options: ReadJsonlOptions = {}): Promise<Table> {
    refuseUnknownKeys(options, READ_JSONL_OPTION_KEYS, 'Table.fromJsonl options');
    const records: TableRecord[] = [];
    const lines: number[] = [];
    const places: string[] = [];
    for (const file of [files].flat()) {
      for await (const { value, line } of jsonLines(file)) {
        records.push(value as TableRecord);
        lines.push(line);
        places.push(`${file}, line ${line}`);
      }
    }
    const origin: TableOrigin =
      typeof files === 'string' || files.length === 1
        ? { file: [files].flat()[0], lines }
        : { rowsOf: files.join(', '), places };
    return Table.ofRecords(records, origin, options.columns);
  }

  private static ofRecords(records: TableRecord[], origin: TableOrigin, columns?: string[]): Table {
    const names: string[] = [...(columns ?? [])];
    const seen = new Set<string>(names);
    records.forEach((record, row) => {
      if (typeof record !== 'object' || record === null || Array.isArray(record)) {
        throw firebrandError('ERR_FIREBRAND_DATA', `${whereIn(origin, row)}: expected a record (an object of fields)`);
      }
      for (const key of Object.keys(record)) {
        if (columns !== undefined && !seen.has(key)) {
          throw firebrandError(
            'ERR_FIREBRAND_DATA',
            `${whereIn(origin, row)}: field '${key}' is none of the columns taken${didYouMean(key, columns)}: ${columns.join(', ')}`,
          );
        }
        if (!seen.has(key)) names.push(key);
        seen.add(key);
      }
    });
    const cells = names.map((column) => records.map((record, row) => recordCell(record[column], origin, row, column)));
    return Table.fromCells(names, cells, origin);
  }

  /** @internal A table of text cells by column (null: missing), typed column by column. */
  static fromCells(
    names: string[],
    cells: (string | null)[][],
    origin: TableOrigin,
    missingTokens?: Map<string, Map<string, number>>,
  ): Table {
    const texts = new Map(names.map((name, i) => [name, cells[i]]));
    return new Table(columnsOf(names, cells, origin), cells[0]?.length ?? 0, origin, texts, missingTokens);
  }

  /**
   * A Parquet file's table (pandas.read_parquet; several files: their rows one after another, as a split's
   * shards): each column typed by the file's schema (numbers, text;
   * booleans, dates and timestamps as text), nulls and NaN as missing values, read one row group at a
   * time with only the `columns` asked for. Any codec pyarrow writes (Snappy, ZSTD, GZIP, Brotli, LZ4).
   */
  static async fromParquet(files: string | string[], options: ReadParquetOptions = {}): Promise<Table> {
    const parts: Table[] = [];
    for await (const part of Table.fromParquetRowGroups(files, options)) parts.push(part);
    return parts.length === 1 ? parts[0] : Table.concatenated(parts, [files].flat().join(', '));
  }

  /**
   * A Parquet file's row groups (or several files', one after another: a split's shards), one table each,
   * read as they are asked for: a file larger than memory is streamed (pyarrow's ParquetFile.iter_batches).
   * Typed as fromParquet; rows are named by their index in their file.
   */
  static async *fromParquetRowGroups(
    files: string | string[],
    options: ReadParquetOptions = {},
  ): AsyncGenerator<Table> {
    refuseUnknownKeys(options, READ_PARQUET_OPTION_KEYS, 'Table.fromParquet options');
    for (const file of [files].flat()) {
      const parquet = await ParquetFile.open(file);
      try {
        const names = parquetColumnNames(parquet, options.columns);
        for await (const group of parquet.rowGroups(names)) {
          const columns = parquetColumns(parquet, names, group);
          const rows = Array.from({ length: group.rows.length }, (_, row) => group.rowStart + row);
          yield Table.typed(names, columns, { file, lines: rows, unit: 'row' });
        }
      } finally {
        await parquet.close();
      }
    }
  }

  /** A table of columns already typed; the texts of number columns are made when asked for. */
  private static typed(names: string[], columns: TableColumn[], origin: TableOrigin): Table {
    const texts = new Map<string, (string | null)[]>();
    names.forEach((name, i) => {
      const column = columns[i];
      if (!(column instanceof Float64Array)) texts.set(name, column);
    });
    return new Table(new Map(names.map((name, i) => [name, columns[i]])), columns[0]?.length ?? 0, origin, texts);
  }

  /** The rows of `parts` one after another: each must have the columns of the first, of the same kinds. */
  private static concatenated(parts: Table[], files: string): Table {
    const names = parts[0]?.columns ?? [];
    for (const part of parts) {
      const differs = part.columns.length !== names.length || names.some((name, i) => part.columns[i] !== name);
      const kind = names.find((name) => !differs && part.kindOf(name) !== parts[0].kindOf(name));
      if (differs || kind !== undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_DATA',
          `${part.where(0)}: ${differs ? `columns ${part.columns.join(', ')}` : `column '${kind}' holds ${part.kindOf(kind as string)}s`}, where ${parts[0].where(0)} has ${differs ? names.join(', ') : `${parts[0].kindOf(kind as string)}s`}`,
        );
      }
    }
    const columns = names.map((name) => {
      const pieces = parts.map((part) => part.column(name));
      if (pieces[0] instanceof Float64Array) {
        const joined = new Float64Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
        let offset = 0;
        for (const piece of pieces) {
          joined.set(piece as Float64Array, offset);
          offset += piece.length;
        }
        return joined;
      }
      return pieces.flatMap((piece) => piece as (string | null)[]);
    });
    // One file's row groups keep naming rows by index; several files' rows each name their file.
    const origin: TableOrigin =
      new Set(parts.map((part) => part.source())).size === 1
        ? { ...(parts[0].origin as FileOrigin), lines: parts.flatMap((part) => (part.origin as FileOrigin).lines) }
        : {
            rowsOf: files,
            places: parts.flatMap((part) => Array.from({ length: part.numRows }, (_, row) => part.where(row))),
          };
    return Table.typed(names, columns, origin);
  }

  /** The column names, in order. */
  get columns(): string[] {
    return [...this.data.keys()];
  }

  /** Whether a column holds numbers or text. */
  kindOf(name: string): 'number' | 'text' {
    return this.column(name) instanceof Float64Array ? 'number' : 'text';
  }

  /** A column's cells as text, as the file or records gave them (null: missing), whatever its kind. */
  textsOf(name: string): (string | null)[] {
    const column = this.column(name);
    let texts = this.texts.get(name);
    if (texts === undefined) {
      texts = Array.from(column as Float64Array, (value) => (Number.isNaN(value) ? null : String(value)));
      this.texts.set(name, texts);
    }
    return texts;
  }

  /** @internal How many of a column's cells each missing-value token (readCsv's naValues) made missing. */
  missingTokensOf(name: string): Map<string, number> {
    return this.missingTokens.get(name) ?? new Map();
  }

  /** A column by name; an unknown name is an error naming the closest. */
  column(name: string): TableColumn {
    const column = this.data.get(name);
    if (column === undefined) throw this.unknownColumn(name);
    return column;
  }

  /** @internal The error for a column this table lacks, with a did-you-mean and the columns it has. */
  unknownColumn(name: string, what = 'column'): Error {
    return firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${this.source()}: no ${what} '${name}'${didYouMean(name, this.columns)}; the columns are ${this.columns.join(', ')}`,
    );
  }

  /** The rows at `indices`, in that order (a part of a split). */
  rows(indices: ArrayLike<number>): Table {
    const picked = new Map<string, TableColumn>();
    const texts = new Map<string, (string | null)[]>();
    for (const [name, column] of this.data) {
      const cells = this.texts.get(name);
      if (cells !== undefined)
        texts.set(
          name,
          Array.from(indices, (i) => cells[i]),
        );
      picked.set(
        name,
        column instanceof Float64Array ? Float64Array.from(indices, (i) => column[i]) : (texts.get(name) ?? []),
      );
    }
    return new Table(picked, indices.length, originOf(this.origin, indices), texts, this.missingTokens);
  }

  /** The columns `names`, in that order (pandas' `table[names]`); an unknown name is an error naming the closest. */
  select(names: string[]): Table {
    const texts = new Map<string, (string | null)[]>();
    const data = new Map(names.map((name) => [name, this.column(name)]));
    for (const name of names) {
      const cells = this.texts.get(name);
      if (cells !== undefined) texts.set(name, cells);
    }
    return new Table(data, this.numRows, this.origin, texts, this.missingTokens);
  }

  /** The rows `keep` returns true for, in order (pandas' boolean indexing); each keeps where it came from. */
  filter(keep: (record: TableRecord, row: number) => boolean): Table {
    const indices: number[] = [];
    for (let row = 0; row < this.numRows; row++) if (keep(this.record(row), row)) indices.push(row);
    return this.rows(indices);
  }

  /**
   * This table with column `name` added (or replaced, in place) from each row's record (pandas' `assign`):
   * typed as fromRecords types a field (numbers where every present value is one; null, undefined, '' and
   * NaN missing); an object, an array or an infinite number is refused, naming the row.
   */
  withColumn(name: string, value: (record: TableRecord, row: number) => TableRecord[string]): Table {
    const cells = Array.from({ length: this.numRows }, (_, row) =>
      recordCell(value(this.record(row), row), this.origin, row, name),
    );
    const column = columnsOf([name], [cells], this.origin).get(name) as TableColumn;
    const data = new Map(this.data);
    data.set(name, column);
    const texts = new Map(this.texts);
    texts.set(name, cells);
    return new Table(data, this.numRows, this.origin, texts, this.missingTokens);
  }

  /** The rows as records: numbers, texts, and null where a value is missing (pandas' `to_dict('records')`). */
  toRecords(): TableRecord[] {
    return Array.from({ length: this.numRows }, (_, row) => this.record(row));
  }

  /** Row `row` as a record. */
  private record(row: number): TableRecord {
    const record: TableRecord = {};
    for (const [name, column] of this.data) {
      const value = column[row];
      record[name] = typeof value === 'number' && Number.isNaN(value) ? null : value;
    }
    return record;
  }

  /**
   * The rows in two named parts: `split({ validation: 0.2, seed: 0 })`, `{ ..., stratify: 'label' }` (each
   * label in both parts in the split's proportion) or `{ ..., groups: 'patient' }` (a group's rows together).
   * Which rows go where is torch.utils.data.random_split's choice with a generator seeded `seed` (default 42),
   * over the rows, each label's rows, or the groups; each part keeps the file's order.
   */
  split(options: TableSplitOptions): { train: Table; validation: Table } {
    const fractions = splitFractions(options);
    const seed = options.seed ?? 42;
    if (options.stratify !== undefined && options.groups !== undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'split: give stratify or groups, not both');
    }
    const by = options.stratify ?? options.groups;
    const parts =
      by === undefined
        ? randomSplitIndices(this.numRows, fractions, seed)
        : splitIndicesBy(this.splitValues(by), options.stratify !== undefined ? 'stratify' : 'groups', fractions, seed);
    // Each part keeps the file's row order.
    const [train, validation] = parts.map((rows) => this.rows([...rows].sort((a, b) => a - b)));
    return { train, validation };
  }

  /** A column's cells as values to split by (null where missing). */
  private splitValues(name: string): Cell[] {
    const column = this.column(name);
    return column instanceof Float64Array
      ? Array.from(column, (value) => (Number.isNaN(value) ? null : value))
      : column;
  }

  /** Where row `row` came from: "file.csv, line 7" or "records[3]". */
  where(row: number): string {
    return whereIn(this.origin, row);
  }

  /** @internal The file or records the table came from. */
  source(): string {
    const origin = this.origin;
    return 'file' in origin ? origin.file : 'rowsOf' in origin ? origin.rowsOf : origin.records;
  }
}
