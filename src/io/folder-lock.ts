// One writer per folder: a run holds `<folder>/.firebrand.lock` (its pid and host) while it writes the
// folder, so that a second run on the same outputDir (two tasks a scheduler started alone, a script
// started twice) is refused instead of deleting the first's files. A lock whose process is gone (this
// host, pid not running) is stale and taken over.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { firebrandError } from '../errors';

export const LOCK_FILE = '.firebrand.lock';

interface LockHolder {
  pid: number;
  host: string;
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

function holderOf(file: string): LockHolder | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LockHolder;
  } catch {
    return undefined; // being written, or removed since: try again
  }
}

/** Takes `folder`'s lock for this process (made if need be); resolves a release. `owner` names the caller in errors. */
export function lockFolder(folder: string, owner: string): () => void {
  fs.mkdirSync(folder, { recursive: true });
  const file = path.join(folder, LOCK_FILE);
  const me: LockHolder = { pid: process.pid, host: os.hostname() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(me), { flag: 'wx' });
      return () => fs.rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(file);
    if (holder !== undefined && (holder.host !== me.host || isRunning(holder.pid))) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_STATE',
        `${owner}: ${folder} is being written by another run (pid ${holder.pid} on ${holder.host}, ${file}); give each run its own outputDir, or remove the lock file if that run is gone`,
      );
    }
    // Stale (its process is gone) or half-written: remove it and try again.
    if (holder !== undefined) fs.rmSync(file, { force: true });
  }
  throw firebrandError('ERR_FIREBRAND_INVALID_STATE', `${owner}: could not take the lock ${file}`);
}
