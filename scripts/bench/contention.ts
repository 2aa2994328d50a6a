// npm run bench:contention: training steps/s with the default thread count against 1 thread and
// all CPUs, on an idle machine and with BENCH_BUSY busy background processes (default: one per CPU,
// so that training on all CPUs oversubscribes them 2x), in alternating rounds; medians. A Node
// service that trains while it serves, or a shared CI machine, is the busy case.
//   BENCH_WORKLOADS (default cnn), BENCH_ROUNDS (3), BENCH_BUSY, BENCH_STEPS (40)
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

const WORKLOADS = (process.env.BENCH_WORKLOADS ?? 'cnn').split(',');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STEPS = Number(process.env.BENCH_STEPS ?? 40);
const CPUS = os.availableParallelism();
const BUSY = Number(process.env.BENCH_BUSY ?? CPUS);
const SETTINGS = ['default', '1', String(CPUS)];

function stepsPerSecond(workload: string, threads: string): number {
  const result = spawnSync(
    process.execPath,
    [path.join(__dirname, 'firebrand-loop.js'), workload, String(STEPS), threads],
    {
      encoding: 'utf8',
      env: { ...process.env, FIREBRAND_LOG_LEVEL: 'warn' },
    },
  );
  if (result.status !== 0) throw new Error(`${workload} with ${threads} threads failed:\n${result.stderr}`);
  const line = result.stdout
    .trim()
    .split('\n')
    .reverse()
    .find((text) => text.startsWith('{')) as string;
  return (JSON.parse(line) as { stepsPerSecond: number }).stepsPerSecond;
}

/** `count` processes spinning on a CPU each until stopped. */
function busyProcesses(count: number): ChildProcess[] {
  return Array.from({ length: count }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function main(): void {
  console.log(`bench:contention: ${CPUS} CPUs, ${ROUNDS} rounds of ${STEPS} steps; busy = ${BUSY} spinning processes`);
  for (const workload of WORKLOADS) {
    const rows: string[] = [];
    for (const busy of [0, BUSY]) {
      const samples: Record<string, number[]> = Object.fromEntries(SETTINGS.map((setting) => [setting, []]));
      const spinning = busyProcesses(busy);
      try {
        for (let round = 0; round < ROUNDS; round++) {
          // Each round starts with the next setting, so that drift favours none.
          for (let turn = 0; turn < SETTINGS.length; turn++) {
            const setting = SETTINGS[(round + turn) % SETTINGS.length];
            samples[setting].push(stepsPerSecond(workload, setting));
          }
        }
      } finally {
        for (const process of spinning) process.kill();
      }
      const medians = SETTINGS.map((setting) => median(samples[setting]));
      const best = Math.max(...medians);
      rows.push(
        `| ${busy === 0 ? 'idle' : `${busy} busy processes`} | ${medians.map((value) => value.toFixed(1)).join(' | ')} | ${(best / medians[0]).toFixed(2)} |`,
      );
    }
    console.log(
      `\n${workload} (steps/s)\n| condition | default threads | 1 thread | ${CPUS} threads | best / default |\n|---|---|---|---|---|`,
    );
    for (const row of rows) console.log(row);
  }
}

main();
