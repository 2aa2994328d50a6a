// npm run bench: the bench workloads trained three ways on identical shapes
// and thread counts — (a) firebrand through its TypeScript API, default
// logging on; (b) a plain PyTorch eager loop in Python (Debian's python3-torch,
// the same libtorch); (c) a raw libtorch C++ loop built from this repository
// (the floor) — in alternating rounds. Prints a table of medians and writes
// bench-results.json (steps/s, the ratios a/c and a/b, peak RSS, time to
// first step). BENCH_ROUNDS, BENCH_THREADS and BENCH_WORKLOADS change the run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { benchSources, buildRawLoop, check, exportTransformer, PYTHON, repo } from './raw-loop-build';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const STEPS: Record<string, number> = {
  tiny: 10000,
  mlp: 300,
  cnn: 60,
  'cnn-module': 60,
  resnet: 30,
  'resnet-head': 60,
  transformer: 30,
  gpt: 40,
};
const WORKLOADS = (process.env.BENCH_WORKLOADS ?? 'tiny,mlp,cnn,cnn-module,resnet,resnet-head,transformer,gpt').split(
  ',',
);

interface Sample {
  stepsPerSecond: number;
  firstStepSeconds: number;
  peakRssMb: number;
  /** firebrand, models written as TypeScript modules: tracing forward, and the whole set-up. */
  traceSeconds?: number;
  setupSeconds?: number;
}

function lastJsonLineText(output: string): string {
  const line = output
    .trim()
    .split('\n')
    .reverse()
    .find((text) => text.startsWith('{'));
  if (line === undefined) throw new Error(`no result in:\n${output}`);
  return line;
}

function lastJsonLine(output: string): Sample {
  return JSON.parse(lastJsonLineText(output)) as Sample;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function main(): void {
  const rawLoop = buildRawLoop();
  const transformer = exportTransformer();
  const env = { ...process.env, OMP_NUM_THREADS: String(THREADS) };
  const sides = {
    firebrand: (name: string) => [
      process.execPath,
      path.join(__dirname, 'firebrand-loop.js'),
      name,
      String(STEPS[name]),
      String(THREADS),
      transformer,
    ],
    python: (name: string) => [
      PYTHON,
      path.join(benchSources, 'python_loop.py'),
      name,
      String(STEPS[name]),
      String(THREADS),
    ],
    raw: (name: string) => [rawLoop, name, String(STEPS[name]), String(THREADS), transformer],
  };
  const results: Record<string, Record<string, Sample[]>> = {};
  for (const name of WORKLOADS) {
    results[name] = { firebrand: [], python: [], raw: [] };
    const order = Object.entries(sides);
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with the next side, so a machine speeding up or slowing down favours none.
      for (let turn = 0; turn < order.length; turn++) {
        const [side, command] = order[(round + turn) % order.length];
        const [program, ...args] = command(name);
        const output = check(
          spawnSync(program, args, { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 }),
          `${side} ${name}`,
        );
        results[name][side].push(lastJsonLine(output));
      }
    }
  }
  const summary = Object.fromEntries(
    WORKLOADS.map((name) => {
      const of = (side: string) => {
        const samples = results[name][side];
        return {
          stepsPerSecond: median(samples.map((sample) => sample.stepsPerSecond)),
          peakRssMb: median(samples.map((sample) => sample.peakRssMb)),
          firstStepSeconds: median(samples.map((sample) => sample.firstStepSeconds)),
        };
      };
      // Ratios are paired within rounds (runs seconds apart), then the median taken: this machine's
      // speed drifts by tens of percent over minutes, which medians of each side alone would carry.
      const ratios = (side: string) =>
        results[name].firebrand.map(
          (sample, round) => sample.stepsPerSecond / results[name][side][round].stepsPerSecond,
        );
      const [firebrand, python, raw] = [of('firebrand'), of('python'), of('raw')];
      const overRaw = ratios('raw');
      return [
        name,
        {
          steps: STEPS[name],
          firebrand,
          python,
          raw,
          firebrandOverRaw: median(overRaw),
          firebrandOverRawRange: [Math.min(...overRaw), Math.max(...overRaw)],
          firebrandOverPython: median(ratios('python')),
        },
      ];
    }),
  );
  console.log(
    `median of ${ROUNDS} alternating rounds, ${THREADS} thread(s); steps/s (peak RSS MB, first step s); ratios: median of per-round ratios`,
  );
  console.log(
    `${'workload'.padEnd(12)} ${'firebrand'.padStart(24)} ${'python'.padStart(24)} ${'raw C++'.padStart(24)} ${'a/c'.padStart(6)} ${'a/c per round'.padStart(14)} ${'a/b'.padStart(6)}`,
  );
  const cell = (side: { stepsPerSecond: number; peakRssMb: number; firstStepSeconds: number }) =>
    `${side.stepsPerSecond.toFixed(1)} (${side.peakRssMb.toFixed(0)}, ${side.firstStepSeconds.toFixed(2)})`.padStart(
      24,
    );
  for (const [name, row] of Object.entries(summary)) {
    const [low, high] = row.firebrandOverRawRange;
    console.log(
      `${name.padEnd(12)} ${cell(row.firebrand)} ${cell(row.python)} ${cell(row.raw)} ${row.firebrandOverRaw.toFixed(2).padStart(6)} ${`${low.toFixed(2)}-${high.toFixed(2)}`.padStart(14)} ${row.firebrandOverPython.toFixed(2).padStart(6)}`,
    );
  }
  for (const name of WORKLOADS) {
    const samples = results[name].firebrand;
    if (samples[0].traceSeconds === undefined) continue;
    const ms = (values: number[]) => `${(1000 * median(values)).toFixed(1)} ms`;
    console.log(
      `${name}: TypeScript module traced in ${ms(samples.map((sample) => sample.traceSeconds as number))}, set up (trace, build, first-batch check) in ${ms(samples.map((sample) => sample.setupSeconds as number))}`,
    );
  }
  // Sampling from the gpt model: firebrand's generate() with and without its key/value cache, and a
  // PyTorch sampling loop (no cache), in turn. 60 new tokens fill the 64 positions.
  const samplers = {
    firebrand: [process.execPath, path.join(__dirname, 'firebrand-loop.js'), 'generate-gpt', '60', String(THREADS)],
    firebrandNoCache: [
      process.execPath,
      path.join(__dirname, 'firebrand-loop.js'),
      'generate-gpt',
      '60',
      String(THREADS),
      'no-cache',
    ],
    python: [PYTHON, path.join(benchSources, 'python_loop.py'), 'generate-gpt', '60', String(THREADS)],
  };
  const generation: Record<string, number[]> = { firebrand: [], firebrandNoCache: [], python: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.keys(samplers) as (keyof typeof samplers)[];
    for (const side of round % 2 === 0 ? order : order.reverse()) {
      const [program, ...args] = samplers[side];
      const output = check(
        spawnSync(program, args, { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 }),
        `${side} generation`,
      );
      generation[side].push((JSON.parse(lastJsonLineText(output)) as { tokensPerSecond: number }).tokensPerSecond);
    }
  }
  const tokensPerSecond = {
    firebrand: median(generation.firebrand),
    firebrandNoCache: median(generation.firebrandNoCache),
    python: median(generation.python),
  };
  console.log(
    `gpt generation (60 tokens after 4, context 64, top-k 20; tokens/s): firebrand with its key/value cache ${tokensPerSecond.firebrand.toFixed(0)}, ` +
      `without ${tokensPerSecond.firebrandNoCache.toFixed(0)}, PyTorch loop without ${tokensPerSecond.python.toFixed(0)}`,
  );
  const health = JSON.parse(
    lastJsonLineText(
      check(
        spawnSync(process.execPath, [path.join(__dirname, 'event-loop-and-memory.js')], {
          encoding: 'utf8',
          env,
          maxBuffer: 64 * 1024 * 1024,
        }),
        'event loop and memory',
      ),
    ),
  ) as {
    eventLoop: { p99Ms: number; maxMs: number };
    memory: { rssAt2000Mb: number; rssAt20000Mb: number; growth: number };
  };
  console.log(
    `event loop while the CNN trains: p99 ${health.eventLoop.p99Ms.toFixed(1)} ms, max ${health.eventLoop.maxMs.toFixed(1)} ms (target p99 < 20)`,
  );
  console.log(
    `RSS after 2,000 tiny steps ${health.memory.rssAt2000Mb.toFixed(0)} MB, after 20,000 ${health.memory.rssAt20000Mb.toFixed(0)} MB: ${(100 * health.memory.growth).toFixed(1)}% (target within 5%)`,
  );
  const out = path.join(repo, 'bench-results.json');
  fs.writeFileSync(
    out,
    `${JSON.stringify({ rounds: ROUNDS, threads: THREADS, summary, generation: tokensPerSecond, health, samples: results }, null, 2)}\n`,
  );
  console.log(`wrote ${path.relative(repo, out)}`);
}

main();
