// A folder written whole or not at all: its files go into a temporary
// sibling, which then replaces the folder.
import fs from 'node:fs';
import path from 'node:path';

export async function replaceFolder(folder: string, writeFiles: (temporary: string) => Promise<void>): Promise<void> {
  const temporary = `${path.resolve(folder)}.tmp-${process.pid}`;
  fs.rmSync(temporary, { recursive: true, force: true });
  fs.mkdirSync(temporary, { recursive: true });
  await writeFiles(temporary);
  if (fs.existsSync(folder)) fs.rmSync(folder, { recursive: true, force: true });
  fs.renameSync(temporary, folder);
}
