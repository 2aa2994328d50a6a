// Root hooks for the whole suite. Mocha can stop without reporting and with
// exit code 0 when an assertion's diff cannot be printed (a BigInt64Array
// mismatch does it); a suite that ends before its last hook must fail CI.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Every temporary folder the tests make, and the examples and docs' code they run (os.tmpdir() reads
// TMPDIR, and child processes inherit it), lies in one folder for the run, removed when the run ends:
// a test that fails before its own cleanup, or a process it kills, leaves nothing in /tmp.
const runFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-test-'));
process.env.TMPDIR = runFolder;

/** Core dumps under `folder` (kernel.core_pattern "core": a crashed process's working folder). */
function coreDumps(folder: string, depth = 3): string[] {
  if (depth === 0) return [];
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const inside = path.join(folder, entry.name);
    if (entry.isDirectory()) return coreDumps(inside, depth - 1);
    return entry.isFile() && /^core(\.\d+)?$/.test(entry.name) ? [inside] : [];
  });
}

/** Removes the run's folder, unless a core dump is there for scripts/with-backtraces.sh to read. */
function removeRunFolder(): void {
  if (!fs.existsSync(runFolder)) return;
  const cores = coreDumps(runFolder);
  if (cores.length > 0) console.error(`kept ${runFolder}: it holds core dumps (${cores.join(', ')})`);
  else {
    try {
      fs.rmSync(runFolder, { recursive: true, force: true, maxRetries: 3 });
    } catch (error) {
      // A process the suite started may still be writing there: the run's result stands.
      console.error(`could not remove ${runFolder}: ${(error as Error).message}`);
    }
  }
}

let finished = false;

export const mochaHooks = {
  afterAll(): void {
    finished = true;
  },
};

process.on('exit', () => {
  removeRunFolder();
  if (!finished) {
    console.error('mocha stopped before the suite finished: a test ended the process early (see the last test above)');
    process.exitCode = 1;
  }
});
