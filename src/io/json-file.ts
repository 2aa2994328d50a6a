// A JSON object read from a file, with errors that name the caller, the file
// and what it was expected to hold.
import fs from 'node:fs';

import { firebrandError } from '../errors';

/** The object in `file`; `owner` opens the errors, `expected` names what the file should be ("a tokenizer's JSON"). */
export function readJsonObject(file: string, owner: string, expected = 'a JSON object'): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${owner}: cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const json: unknown = JSON.parse(text);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('expected a JSON object');
    return json as Record<string, unknown>;
  } catch (error) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${owner}: ${file} is not ${expected}: ${(error as Error).message}`);
  }
}

/** A file firebrand wrote as `{ format, formatVersion: 1, ... }`: bad JSON or another format is named. */
export function readFormatFile<Saved>(file: string, format: string): Saved {
  let saved: { format?: unknown; formatVersion?: unknown };
  try {
    saved = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof saved;
  } catch (error) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${file}: not valid JSON (${(error as Error).message})`);
  }
  if (saved.format !== format || saved.formatVersion !== 1) {
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `${file}: format ${String(saved.format)} v${String(saved.formatVersion)} is not ${format} v1`,
    );
  }
  return saved as Saved;
}
