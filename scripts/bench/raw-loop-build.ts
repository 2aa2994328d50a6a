// What the bench scripts share: the raw libtorch loop built from
// scripts/bench/raw_loop.cpp against the libtorch found (build/bench-raw),
// and the transformer workload exported to TorchScript by python_loop.py.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export const repo = path.resolve(__dirname, '..', '..', '..');
export const benchSources = path.join(repo, 'scripts', 'bench');
const buildFolder = path.join(repo, 'build', 'bench-raw');
// Debian's python3-torch lives in the system Python, which a PATH python3 (a venv, /usr/local) may not be.
export const PYTHON = process.env.BENCH_PYTHON ?? '/usr/bin/python3';

export function check(result: ReturnType<typeof spawnSync>, what: string): string {
  if (result.status !== 0) throw new Error(`${what} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return String(result.stdout);
}

/** Builds (or brings up to date) the raw loop; returns the program's path. */
export function buildRawLoop(): string {
  check(
    spawnSync('cmake', ['-S', benchSources, '-B', buildFolder, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release'], {
      encoding: 'utf8',
    }),
    'cmake (raw loop)',
  );
  check(spawnSync('cmake', ['--build', buildFolder, '-j', '2'], { encoding: 'utf8' }), 'building the raw loop');
  return path.join(buildFolder, 'raw_loop');
}

/** Exports the transformer workload to TorchScript; returns the file's path. */
export function exportTransformer(): string {
  const transformer = path.join(buildFolder, 'transformer.pt');
  check(
    spawnSync(PYTHON, [path.join(benchSources, 'python_loop.py'), 'export-transformer', transformer], {
      encoding: 'utf8',
    }),
    'exporting the transformer',
  );
  return transformer;
}
