// CSV files into Tables through csv-parse (quoting, CRLF or LF or CR line ends,
// a UTF-8 byte-order mark, quoted newlines), streamed from the file so that a
// large one never holds up the event loop for long.
import { parse } from 'csv-parse';
import fs from 'node:fs';

import { firebrandError } from '../errors';
import { Table } from './table';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';

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

const READ_CSV_OPTION_KEYS = optionKeys<ReadCsvOptions>()(['delimiter', 'header', 'columns', 'naValues']);

/** Reads a CSV file: column names from the header row, each column numbers or text (see Table). */
export async function readCsv(file: string, options: ReadCsvOptions = {}): Promise<Table> {
  refuseUnknownKeys(options, READ_CSV_OPTION_KEYS, 'readCsv options');
  const missing = new Set(options.naValues ?? PANDAS_NA_VALUES);
  await checkCsvFile(file);
  const parser = parse({ bom: true, delimiter: options.delimiter ?? ',', skip_empty_lines: true, info: true });
  fs.createReadStream(file)
    .on('error', (error) => parser.destroy(error))
    .pipe(parser);
  let names: string[] | undefined;
  let cells: (string | null)[][] = [];
  let tokens: Map<string, number>[] = [];
  const lines: number[] = [];
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (names === undefined) {
        names = options.header === false ? record.map((_, i) => String(i)) : headerNames(record, file);
        cells = names.map(() => []);
        tokens = names.map(() => new Map());
        if (options.header !== false) continue;
      }
      record.forEach((cell, i) => {
        const isMissing = missing.has(cell);
        if (isMissing) tokens[i].set(cell, (tokens[i].get(cell) ?? 0) + 1);
        cells[i].push(isMissing ? null : cell);
      });
      lines.push(info.lines);
    }
  } catch (error) {
    throw readError(error as { code?: string; lines?: number; message: string }, file);
  }
  if (names === undefined) throw firebrandError('ERR_FIREBRAND_FILE', `${file}: the CSV file is empty`);
  const missingTokens = new Map(names.map((name, i) => [name, tokens[i]]));
  if (options.columns === undefined) return Table.fromCells(names, cells, { file, lines }, missingTokens);
  const wanted = options.columns;
  const header = Table.fromCells(
    names,
    names.map(() => []),
    { file, lines: [] },
  );
  for (const name of wanted) if (!names.includes(name)) throw header.unknownColumn(name);
  const picked = wanted.map((name) => cells[names.indexOf(name)]);
  return Table.fromCells(wanted, picked, { file, lines }, missingTokens);
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

/**
 * A file that can be read as CSV text: a missing one, or a directory, is said as the C++ readers say it;
 * one whose first 64 KiB hold a NUL byte or bytes that are not UTF-8 (an image, a zip, a Latin-1 export) is
 * named with the offset of the first such byte, as pandas names it.
 */
async function checkCsvFile(file: string): Promise<void> {
  const status = await fs.promises.stat(file).catch((error: Error) => {
    throw firebrandError('ERR_FIREBRAND_FILE', `${file}: cannot open CSV file (${error.message})`);
  });
  if (status.isDirectory()) throw firebrandError('ERR_FIREBRAND_FILE', `${file}: is a directory, expected a CSV file`);
  const handle = await fs.promises.open(file, 'r');
  try {
    const head = Buffer.alloc(Math.min(status.size, 64 * 1024));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const offset = firstNonTextByte(head.subarray(0, bytesRead), bytesRead < status.size);
    if (offset !== undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_FILE',
        `${file}: not a CSV text file: byte ${offset} (0x${head[offset].toString(16).padStart(2, '0')}) is ` +
          `${head[offset] === 0 ? 'a NUL, which text never holds' : 'not UTF-8'}; save the table as UTF-8 CSV`,
      );
    }
  } finally {
    await handle.close();
  }
}

/** The offset of the first NUL byte or byte that breaks UTF-8; a sequence cut by the end of a partial read is fine. */
function firstNonTextByte(bytes: Uint8Array, partial: boolean): number | undefined {
  for (let i = 0; i < bytes.length;) {
    const byte = bytes[i];
    if (byte === 0) return i;
    const length =
      byte < 0x80
        ? 1
        : byte >= 0xc2 && byte < 0xe0
          ? 2
          : byte >= 0xe0 && byte < 0xf0
            ? 3
            : byte >= 0xf0 && byte < 0xf5
              ? 4
              : 0;
    if (length === 0) return i;
    for (let k = 1; k < length; k++) {
      if (i + k >= bytes.length) return partial ? undefined : i;
      if ((bytes[i + k] & 0xc0) !== 0x80) return i;
    }
    i += length;
  }
  return undefined;
}

/** A file or CSV error as firebrand's, naming the file and line. */
function readError(error: { code?: string; lines?: number; message: string }, file: string): Error {
  if (error.code === 'ENOENT' || error.code === 'EACCES' || error.code === 'EISDIR') {
    return firebrandError('ERR_FIREBRAND_FILE', `${file}: cannot open CSV file (${error.message})`);
  }
  const line = error.lines !== undefined ? `, line ${error.lines}` : '';
  return firebrandError('ERR_FIREBRAND_FILE', `${file}${line}: ${error.message}`);
}
