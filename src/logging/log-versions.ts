// A run's log folder: outputDir/logs/version_N, N one past the highest there
// (Lightning's numbering), so that a second run beside the first, or a resumed
// one, writes its own files instead of over the first's.
import fs from 'node:fs';
import path from 'node:path';

const VERSION_FOLDER = /^version_(\d+)$/;

/** outputDir/logs: where every run's version folder lives. */
export function logsFolder(outputDir: string): string {
  return path.join(outputDir, 'logs');
}

/** The version folders under outputDir/logs, oldest first. */
export function logVersions(outputDir: string): string[] {
  const logs = logsFolder(outputDir);
  if (!fs.existsSync(logs)) return [];
  return fs
    .readdirSync(logs)
    .map((name) => ({ name, version: VERSION_FOLDER.exec(name)?.[1] }))
    .filter((entry) => entry.version !== undefined && fs.statSync(path.join(logs, entry.name)).isDirectory())
    .sort((a, b) => Number(a.version) - Number(b.version))
    .map((entry) => path.join(logs, entry.name));
}

/**
 * Makes and returns the next version folder. mkdir claims it atomically: two processes starting on one
 * outputDir at once get two folders.
 */
export function claimLogVersion(outputDir: string): string {
  const logs = logsFolder(outputDir);
  fs.mkdirSync(logs, { recursive: true });
  const highest = logVersions(outputDir).map((folder) => Number(VERSION_FOLDER.exec(path.basename(folder))?.[1]));
  for (let version = highest.length === 0 ? 0 : Math.max(...highest) + 1; ; version++) {
    const folder = path.join(logs, `version_${version}`);
    try {
      fs.mkdirSync(folder);
      return folder;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
