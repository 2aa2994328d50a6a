// npm run bench:instructions: the instructions one training step executes
// (callgrind), firebrand's loop (scripts/bench/firebrand-loop.ts) against the
// raw libtorch loop (scripts/bench/raw_loop.cpp), split by the shared object
// they run in: libtorch's own dispatch and kernels apart from firebrand's code.
// Each side runs twice, N and 2N steps; a step costs the difference over N,
// so start-up and set-up cancel out. The thread that runs the steps is split
// by shared object; every other thread (JS, V8's helpers, loaders) is one
// line. Instruction counts do not drift with the machine's speed, as timings
// do. Needs valgrind.
//   BENCH_WORKLOADS (tiny), BENCH_STEPS (N: 512, a multiple of the workload's
//   epoch for firebrand), BENCH_THREADS (1)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { runtimeInfo } from '../../src';
import { buildRawLoop, exportTransformer } from './raw-loop-build';

const firebrandLoop = path.join(__dirname, 'firebrand-loop.js');
const OTHER_THREADS = 'other threads';

/** Self instructions per shared object, from a callgrind output written uncompressed. */
function instructionsByObject(file: string): Map<string, number> {
  const totals = new Map<string, number>();
  let object = '?';
  let skipCallCost = false;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('ob=')) object = path.basename(line.slice(3));
    else if (line.startsWith('calls=')) skipCallCost = true;
    else if (/^[0-9+*-]/.test(line)) {
      // The line after calls= is the callee's inclusive cost, counted in the callee's own lines.
      if (skipCallCost) skipCallCost = false;
      else totals.set(object, (totals.get(object) ?? 0) + Number(line.split(' ')[1] ?? 0));
    }
  }
  return totals;
}

/** Self instructions per shared object, for each thread of the run in the order they started. */
function callgrind(command: string, args: string[], out: string): Map<string, number>[] {
  const result = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--separate-threads=yes',
      '--compress-strings=no',
      '--compress-pos=no',
      `--callgrind-out-file=${out}`,
      command,
      ...args,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (result.status !== 0)
    throw new Error(`valgrind ${command} failed (${result.status}):\n${result.stderr.slice(-3000)}`);
  const folder = path.dirname(out);
  return fs
    .readdirSync(folder)
    .filter((name) => name.startsWith(`${path.basename(out)}-`))
    .sort()
    .map((name) => instructionsByObject(path.join(folder, name)));
}

/** Groups an object file name into the part of the stack it belongs to. */
function stackPart(object: string): string {
  if (object === 'firebrand.node') return 'firebrand.node';
  if (object === 'raw_loop') return 'raw loop';
  if (/^libtorch_cpu\.so/.test(object)) return 'libtorch_cpu';
  if (/^lib(c10|torch)\.so/.test(object)) return 'libc10, libtorch';
  if (/^lib(openblas|blas|gomp|omp)/.test(object)) return 'BLAS, OpenMP';
  if (/^lib(c|m|stdc\+\+|gcc_s)\.so|^ld-linux/.test(object)) return 'libc, libstdc++';
  if (object === 'node' || /^libnode/.test(object)) return 'node';
  return 'other';
}

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

/**
 * What one step costs: the difference of the two runs over `steps`, for the thread whose count grew
 * most (the one that runs the steps) by part of the stack, and for all other threads together as
 * 'other threads': V8's compiler and GC helpers there swing by tens of thousands of instructions per
 * step between runs of the same code, which would hide the step's own count.
 */
function perStep(first: Map<string, number>[], second: Map<string, number>[], steps: number): Map<string, number> {
  const growth = (thread: number) => sum(second[thread]?.values() ?? []) - sum(first[thread]?.values() ?? []);
  const threads = [...Array(Math.max(first.length, second.length)).keys()];
  const stepThread = threads.reduce((busiest, thread) => (growth(thread) > growth(busiest) ? thread : busiest), 0);
  const parts = new Map<string, number>([
    [OTHER_THREADS, sum(threads.filter((thread) => thread !== stepThread).map(growth)) / steps],
  ]);
  const [before, after] = [
    first[stepThread] ?? new Map<string, number>(),
    second[stepThread] ?? new Map<string, number>(),
  ];
  for (const object of new Set([...before.keys(), ...after.keys()])) {
    const part = stackPart(object);
    parts.set(part, (parts.get(part) ?? 0) + ((after.get(object) ?? 0) - (before.get(object) ?? 0)) / steps);
  }
  return parts;
}

function main(): void {
  const workloads = (process.env.BENCH_WORKLOADS ?? 'tiny').split(',');
  const steps = Number(process.env.BENCH_STEPS ?? 512);
  const threads = process.env.BENCH_THREADS ?? '1';
  const rawLoop = buildRawLoop();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-callgrind-'));
  const { torchVersion } = runtimeInfo().build;
  console.log(
    `instructions per step (callgrind; ${steps} and ${2 * steps} steps, difference over ${steps}), libtorch ${torchVersion}, ${threads} thread(s)`,
  );
  for (const workload of workloads) {
    const extra = workload === 'transformer' ? [exportTransformer()] : [];
    const sides = {
      firebrand: (n: number) =>
        callgrind(
          process.execPath,
          [firebrandLoop, workload, String(n), threads, ...extra],
          path.join(work, `fb-${n}`),
        ),
      raw: (n: number) => callgrind(rawLoop, [workload, String(n), threads, ...extra], path.join(work, `raw-${n}`)),
    };
    const costs = Object.fromEntries(
      Object.entries(sides).map(([side, run]) => [side, perStep(run(steps), run(2 * steps), steps)]),
    );
    const parts = [...new Set(Object.values(costs).flatMap((cost) => [...cost.keys()]))].sort();
    const rows = parts.map(
      (part) => [part, ...Object.values(costs).map((cost) => Math.round(cost.get(part) ?? 0))] as const,
    );
    const totals = Object.values(costs).map((cost) => Math.round([...cost.values()].reduce((a, b) => a + b, 0)));
    console.log(
      `\n${workload}:\n${'part'.padEnd(18)}${Object.keys(sides)
        .map((side) => side.padStart(12))
        .join('')}`,
    );
    for (const [part, ...values] of rows) {
      if (values.every((value) => Math.abs(value) < 50)) continue;
      console.log(`${part.padEnd(18)}${values.map((value) => value.toLocaleString('en-US').padStart(12)).join('')}`);
    }
    console.log(`${'total'.padEnd(18)}${totals.map((value) => value.toLocaleString('en-US').padStart(12)).join('')}`);
  }
  fs.rmSync(work, { recursive: true, force: true });
}

main();
