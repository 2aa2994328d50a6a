// npm run bench:tables (and the end of npm run bench): tables against the
// Python stack, in alternating rounds, each side in a child process of its own.
// (1) Parquet read throughput and peak RSS: Table.fromParquet against
//     pyarrow.parquet.read_table(...).to_pandas() on one file (BENCH_PARQUET_ROWS
//     rows, default 200,000: numbers, a dictionary-encoded category, text,
//     nulls; Snappy pages, row groups of 50,000), written by pyarrow where it is
//     (the sid chroot), else by hyparquet-writer and read by firebrand alone.
// (2) A table trained end to end (CSV -> preprocessing -> fit -> predict) on
//     examples/data/passengers.csv against scikit-learn's MLPClassifier on the
//     same rows and features: time and validation accuracy side by side.
// BENCH_ROUNDS (default 3) and BENCH_PYTHON change the run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';

import { PYTHON, benchSources, repo } from './raw-loop-build';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROWS = Number(process.env.BENCH_PARQUET_ROWS ?? 200_000);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

interface Measure {
  seconds: number;
  peakRssMb: number;
  rows?: number;
  accuracy?: number;
}

function run(command: string, args: string[]): Measure {
  const result = spawnSync(command, args, { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: '1' } });
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  if (result.status !== 0 || !line.startsWith('{')) {
    throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}${result.stdout}`);
  }
  return JSON.parse(line) as Measure;
}

/** What python3 here lacks of `modules`, or undefined when it has them all. */
function pythonLacks(modules: string[]): string | undefined {
  const probe = spawnSync(PYTHON, ['-c', `import ${modules.join(', ')}`], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : (probe.stderr.trim().split('\n').at(-1) ?? 'not found');
}

/** The bench's Parquet file: pyarrow's where it is, else hyparquet-writer's. */
function writeParquet(file: string, withPyarrow: boolean): string {
  if (withPyarrow) {
    run(PYTHON, [path.join(benchSources, 'tables_bench.py'), 'write-parquet', file, String(ROWS)]);
    return 'pyarrow';
  }
  const species = ['Adelie', 'Gentoo', 'Chinstrap'];
  const bytes = parquetWriteBuffer({
    rowGroupSize: 50_000,
    columnData: [
      { name: 'id', data: Int32Array.from({ length: ROWS }, (_, i) => i), type: 'INT32' },
      {
        name: 'mass',
        data: Array.from({ length: ROWS }, (_, i) => (i % 17 === 0 ? null : 3000 + (i % 2000))),
        type: 'DOUBLE',
      },
      { name: 'species', data: Array.from({ length: ROWS }, (_, i) => species[i % 3]), type: 'STRING' },
      { name: 'note', data: Array.from({ length: ROWS }, (_, i) => `bird ${i} seen`), type: 'STRING' },
    ],
  });
  fs.writeFileSync(file, new Uint8Array(bytes));
  return 'hyparquet-writer';
}

function parquetRead(folder: string, python: string | undefined): void {
  const file = path.join(folder, 'bench.parquet');
  const writer = writeParquet(file, python === undefined);
  const firebrand: Measure[] = [];
  const pyarrow: Measure[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    firebrand.push(run(process.execPath, [path.join(__dirname, 'tables-child.js'), 'read-parquet', file]));
    if (python === undefined)
      pyarrow.push(run(PYTHON, [path.join(benchSources, 'tables_bench.py'), 'read-parquet', file]));
  }
  const line = (name: string, measures: Measure[]) =>
    `  ${name.padEnd(28)} ${(ROWS / median(measures.map((m) => m.seconds)) / 1000).toFixed(0).padStart(7)}k rows/s  ` +
    `peak RSS ${median(measures.map((m) => m.peakRssMb))
      .toFixed(0)
      .padStart(5)} MB`;
  console.log(
    `Parquet read, ${ROWS} rows x 4 columns (written by ${writer}, ${(fs.statSync(file).size / 1e6).toFixed(1)} MB):`,
  );
  console.log(line('firebrand Table.fromParquet', firebrand));
  if (python === undefined) console.log(line('pyarrow read_table.to_pandas', pyarrow));
  else console.log(`  pyarrow: skipped (${PYTHON}: ${python})`);
}

function tableTraining(python: string | undefined): void {
  const csv = path.join(repo, 'examples', 'data', 'passengers.csv');
  const firebrand: Measure[] = [];
  const sklearn: Measure[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    firebrand.push(run(process.execPath, [path.join(__dirname, 'tables-child.js'), 'train-table', csv]));
    if (python === undefined)
      sklearn.push(run(PYTHON, [path.join(benchSources, 'tables_bench.py'), 'train-table', csv]));
  }
  const line = (name: string, measures: Measure[]) =>
    `  ${name.padEnd(34)} ${median(measures.map((m) => m.seconds))
      .toFixed(2)
      .padStart(6)} s  ` + `validation accuracy ${median(measures.map((m) => m.accuracy ?? NaN)).toFixed(3)}`;
  console.log('Table end to end (passengers.csv: read, preprocess, 16-unit MLP, 60 epochs, predict):');
  console.log(line('firebrand', firebrand));
  if (python === undefined) console.log(line('scikit-learn MLPClassifier', sklearn));
  else console.log(`  scikit-learn: skipped (${PYTHON}: ${python})`);
}

function main(): void {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bench-tables-'));
  try {
    parquetRead(folder, pythonLacks(['pyarrow.parquet', 'pandas']));
    tableTraining(pythonLacks(['sklearn', 'pandas']));
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

main();
