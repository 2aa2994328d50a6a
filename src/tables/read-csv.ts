// CSV files into Tables through csv-parse (quoting, CRLF or LF or CR line ends,
// a UTF-8 byte-order mark, quoted newlines), streamed from the file so that a
// large one never holds up the event loop for long.
import { parse } from 'csv-parse';
import fs from 'node:fs';

import { firebrandError } from '../errors';
import { Table } from './table';

/** pandas.read_csv's default na_values: cells that read as a missing value. */
// prettier-ignore
export const PANDAS_NA_VALUES = [
  '', '#N/A', '#N/A N/A', '#NA', '-1.#IND', '-1.#QNAN', '-NaN', '-nan', '1.#IND', '1.#QNAN',
  '<NA>', 'N/A', 'NA', 'NULL', 'NaN', 'None', 'n/a', 'nan', 'null',
];

export interface ReadCsvOptions {
  /** The field separator. Default ','. */
  delimiter?: string;
  /** Whether the first row names the columns (default true); without, they are named '0', '1', .... */
  header?: boolean;
  /** Only these columns, in this order; a name the file lacks is an error naming the closest. */
  columns?: string[];
  /** Cells that are missing values. Default pandas.read_csv's na_values ('', 'NA', 'NaN', 'null', ...). */
  naValues?: string[];
}

/** Reads a CSV file: column names from the header row, each column numbers or text (see Table). */
export async function readCsv(file: string, options: ReadCsvOptions = {}): Promise<Table> {
  const missing = new Set(options.naValues ?? PANDAS_NA_VALUES);
  await checkCsvFile(file);
  const parser = parse({ bom: true, delimiter: options.delimiter ?? ',', skip_empty_lines: true, info: true });
  fs.createReadStream(file)
    .on('error', (error) => parser.destroy(error))
    .pipe(parser);
  let names: string[] | undefined;
  let cells: (string | null)[][] = [];
  const lines: number[] = [];
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (names === undefined) {
        names = options.header === false ? record.map((_, i) => String(i)) : headerNames(record, file);
        cells = names.map(() => []);
        if (options.header !== false) continue;
      }
      record.forEach((cell, i) => cells[i].push(missing.has(cell) ? null : cell));
      lines.push(info.lines);
    }
  } catch (error) {
    throw readError(error as { code?: string; lines?: number; message: string }, file);
  }
  if (names === undefined) throw firebrandError('ERR_FIREBRAND_FILE', `${file}: the CSV file is empty`);
  const table = Table.fromCells(names, cells, { file, lines });
  return options.columns === undefined ? table : selected(table, names, cells, options.columns, file, lines);
}

/** The header row's names: a blank one is "Unnamed: <index>" as pandas names it; a repeated one is an error. */
function headerNames(record: string[], file: string): string[] {
  const names = record.map((name, i) => (name === '' ? `Unnamed: ${i}` : name));
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${file}, line 1: the header names column '${repeated}' twice`);
  }
  return names;
}

function selected(
  table: Table,
  names: string[],
  cells: (string | null)[][],
  wanted: string[],
  file: string,
  lines: number[],
): Table {
  for (const name of wanted) if (!names.includes(name)) throw table.unknownColumn(name);
  return Table.fromCells(
    wanted,
    wanted.map((name) => cells[names.indexOf(name)]),
    { file, lines },
  );
}

/** A file that can be read: a missing one, or a directory, is said as the C++ readers say it. */
async function checkCsvFile(file: string): Promise<void> {
  const status = await fs.promises.stat(file).catch((error: Error) => {
    throw firebrandError('ERR_FIREBRAND_FILE', `${file}: cannot open CSV file (${error.message})`);
  });
  if (status.isDirectory()) throw firebrandError('ERR_FIREBRAND_FILE', `${file}: is a directory, expected a CSV file`);
}

/** A file or CSV error as firebrand's, naming the file and line. */
function readError(error: { code?: string; lines?: number; message: string }, file: string): Error {
  if (error.code === 'ENOENT' || error.code === 'EACCES' || error.code === 'EISDIR') {
    return firebrandError('ERR_FIREBRAND_FILE', `${file}: cannot open CSV file (${error.message})`);
  }
  const line = error.lines !== undefined ? `, line ${error.lines}` : '';
  return firebrandError('ERR_FIREBRAND_FILE', `${file}${line}: ${error.message}`);
}
