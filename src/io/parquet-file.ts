// Parquet files through hyparquet (pure JavaScript, no native binary; with
// hyparquet-compressors for the ZSTD, GZIP, Brotli and LZ4 pages Hugging Face
// datasets and pyarrow write): the footer is read at open, then one row group
// at a time, only the columns asked for, so that a file larger than memory
// can be streamed. Values arrive as JavaScript values: numbers, strings,
// booleans, Dates, and arrays/objects for nested columns.
import fs from 'node:fs/promises';
import { parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';
import type { AsyncBuffer, FileMetaData, SchemaTree } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

import { firebrandError } from '../errors';

/**
 * What a Parquet column holds, by its schema: numbers (integers, floats, decimals), text (UTF-8 strings,
 * enums, JSON, times of day), booleans, dates (days), timestamps, nested values (lists, structs, maps), or
 * raw bytes.
 */
export type ParquetColumnKind = 'number' | 'text' | 'boolean' | 'date' | 'timestamp' | 'nested' | 'bytes';

/** One row group's rows (objects by column name), and the file's index of its first row. */
export interface ParquetRowGroup {
  rowStart: number;
  rows: Record<string, unknown>[];
}

/** A Parquet file opened for reading: its columns and row count from the footer, its rows by row group. */
export class ParquetFile {
  private constructor(
    readonly file: string,
    private readonly handle: fs.FileHandle,
    private readonly buffer: AsyncBuffer,
    private readonly metadata: FileMetaData,
    /** The top-level columns, in the file's order, with what each holds. */
    readonly columns: { name: string; kind: ParquetColumnKind }[],
  ) {}

  /** Opens `file` and reads its footer; a missing file or one that is not Parquet is an error naming it. */
  static async open(file: string): Promise<ParquetFile> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      throw firebrandError('ERR_FIREBRAND_DATA', `${file}: cannot open (${(error as Error).message})`);
    }
    try {
      const { size } = await handle.stat();
      const buffer = fileBuffer(handle, size);
      const metadata = await parquetMetadataAsync(buffer);
      const columns = parquetSchema(metadata).children.map((column) => ({
        name: column.element.name,
        kind: columnKind(column),
      }));
      return new ParquetFile(file, handle, buffer, metadata, columns);
    } catch (error) {
      await handle.close();
      throw firebrandError(
        'ERR_FIREBRAND_DATA',
        `${file}: not a Parquet file hyparquet can read (${(error as Error).message})`,
      );
    }
  }

  /** How many rows the file holds. */
  get numRows(): number {
    return Number(this.metadata.num_rows);
  }

  /** How many row groups the file holds. */
  get numRowGroups(): number {
    return this.metadata.row_groups.length;
  }

  /** The rows of each row group in turn, with only the `columns` asked for (all by default). */
  async *rowGroups(columns?: string[]): AsyncGenerator<ParquetRowGroup> {
    const names = columns ?? this.columns.map((column) => column.name);
    let rowStart = 0;
    for (const group of this.metadata.row_groups) {
      const rowEnd = rowStart + Number(group.num_rows);
      const rows = await this.read(names, rowStart, rowEnd);
      yield { rowStart, rows };
      rowStart = rowEnd;
    }
  }

  /** Closes the file. */
  async close(): Promise<void> {
    await this.handle.close();
  }

  private async read(columns: string[], rowStart: number, rowEnd: number): Promise<Record<string, unknown>[]> {
    try {
      return await parquetReadObjects({
        file: this.buffer,
        metadata: this.metadata,
        columns,
        rowStart,
        rowEnd,
        compressors,
      });
    } catch (error) {
      throw firebrandError(
        'ERR_FIREBRAND_DATA',
        `${this.file}: rows ${rowStart} to ${rowEnd - 1} cannot be read (${(error as Error).message})`,
      );
    }
  }
}

/** Reads every row group of `file` in turn (the columns asked for), closing it however the reading ends. */
export async function* parquetRowGroups(file: string, columns?: string[]): AsyncGenerator<ParquetRowGroup> {
  const parquet = await ParquetFile.open(file);
  try {
    yield* parquet.rowGroups(columns);
  } finally {
    await parquet.close();
  }
}

/** hyparquet's view of a file: byte ranges read at their offsets, so that only the parts asked for are read. */
function fileBuffer(handle: fs.FileHandle, size: number): AsyncBuffer {
  return {
    byteLength: size,
    async slice(start: number, end = size): Promise<ArrayBuffer> {
      const bytes = new Uint8Array(Math.max(0, end - start));
      let read = 0;
      while (read < bytes.length) {
        const { bytesRead } = await handle.read(bytes, read, bytes.length - read, start + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      return bytes.buffer;
    },
  };
}

const NUMBER_TYPES = new Set(['INT32', 'INT64', 'FLOAT', 'DOUBLE']);
const TEXT_TYPES = new Set(['UTF8', 'ENUM', 'JSON', 'STRING', 'TIME', 'TIME_MILLIS', 'TIME_MICROS']);
const TIMESTAMP_TYPES = new Set(['TIMESTAMP', 'TIMESTAMP_MILLIS', 'TIMESTAMP_MICROS']);

/** What a top-level column holds, from its schema element's physical, converted and logical types. */
function columnKind(column: SchemaTree): ParquetColumnKind {
  const { type, converted_type: converted, logical_type: logical } = column.element;
  if (column.children.length > 0) return 'nested';
  const annotations: string[] = [];
  if (converted !== undefined) annotations.push(converted);
  if (logical !== undefined) annotations.push(logical.type);
  if (annotations.includes('DATE')) return 'date';
  if (type === 'INT96' || annotations.some((name) => TIMESTAMP_TYPES.has(name))) return 'timestamp';
  if (type === 'BOOLEAN') return 'boolean';
  if (annotations.some((name) => TEXT_TYPES.has(name))) return 'text';
  if (type !== undefined && NUMBER_TYPES.has(type)) return 'number';
  if (annotations.includes('DECIMAL') || annotations.includes('FLOAT16')) return 'number';
  return 'bytes';
}
