// JSON Lines files read as a stream, a line at a time (a file larger than
// memory never is whole in it): blank lines skipped, a line that is not JSON
// named by file and line number.
import fs from 'node:fs';
import readline from 'node:readline';

import { firebrandError } from '../errors';

/** One line's value and its number in the file (from 1). */
export interface JsonLine {
  value: unknown;
  line: number;
}

/** The values of `file`'s lines in order; a missing file or a line that is not JSON is an error naming it. */
export async function* jsonLines(file: string): AsyncGenerator<JsonLine> {
  const stream = fs.createReadStream(file, { encoding: 'utf8' });
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  try {
    await opened;
  } catch (error) {
    throw firebrandError('ERR_FIREBRAND_DATA', `${file}: cannot open (${(error as Error).message})`);
  }
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line += 1;
      const trimmed = line === 1 ? text.replace(/^\uFEFF/, '').trim() : text.trim();
      if (trimmed === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(trimmed);
      } catch (error) {
        throw firebrandError('ERR_FIREBRAND_DATA', `${file}:${line}: not JSON (${(error as Error).message})`);
      }
      yield { value, line };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
