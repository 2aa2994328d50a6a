// Debian's Chromium, headless: the DOM a page ends with, and what it logged.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The Chromium binary, when installed (apt-get install chromium). */
export const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((file) => fs.existsSync(file));

export interface PageRun {
  stdout: string;
  stderr: string;
  status: number | null;
}

/**
 * Loads `url` with `extraArguments` (--screenshot=...) and resolves with the dumped DOM in stdout and
 * the browser's log (console messages included) in stderr. Asynchronous, so that a page served by this
 * process's event loop is answered. `profile` is a folder for the browser's profile.
 */
export function loadPage(url: string, profile: string, extraArguments: string[] = []): Promise<PageRun> {
  return new Promise((resolve) => {
    execFile(
      chromium as string,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--enable-logging=stderr',
        `--user-data-dir=${path.join(profile, 'profile')}`,
        '--virtual-time-budget=30000',
        ...extraArguments,
        '--dump-dom',
        url,
      ],
      { encoding: 'utf8', timeout: 300_000, maxBuffer: 1 << 26 },
      (error, stdout, stderr) => resolve({ stdout, stderr, status: error ? (error.code as number) : 0 }),
    );
  });
}
