// npm run bench:distributed: data-parallel scaling on this machine. The MLP
// workload (784-512-512-10, batch 64 per rank, SGD, 1 thread per rank) trains
// as 1 rank and as 2 ranks (`firebrand launch`, Gloo on 127.0.0.1; each rank
// gets its own batch, so the global batch doubles: weak scaling). Prints
// steps/s, samples/s and the scaling efficiency, samples/s(2) / (2 x samples/s(1)).
// A third run, two independent 1-rank processes at once (no communication),
// shows what the machine's cores give two processes, so that the cost of DDP
// itself can be told from contention for the cores. PyTorch's DDP on the same
// workload under its torchrun (scripts/bench/ddp_torch.py, BENCH_PYTHON's
// torch) runs in alternating rounds with firebrand's 2 ranks (BENCH_ROUNDS,
// default 3; medians), where that Python has torch.distributed.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';

import { Dataset, nn, Trainer } from '../src';

const STEPS = Number(process.env.BENCH_STEPS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PYTHON = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
const BATCH = 64;

interface Rate {
  stepsPerSecond: number;
  samplesPerSecond: number;
}

/** Trains STEPS steps on this rank (after a warm-up) and measures them. */
async function measure(): Promise<Rate> {
  const worldSize = Number(process.env.WORLD_SIZE ?? 1);
  const samples = STEPS * BATCH * worldSize;
  const inputs = new Float32Array(samples * 784).map((_, i) => Math.sin(i * 0.37));
  const targets = new Int32Array(samples).map((_, i) => i % 10);
  const data = Dataset.fromArrays({ inputs, inputShape: [samples, 784], targets });
  const trainer = new Trainer({
    model: nn.sequential(nn.linear(784, 512), nn.relu(), nn.linear(512, 512), nn.relu(), nn.linear(512, 10)),
    loss: 'cross_entropy',
    optimizer: { name: 'sgd', lr: 0.01, momentum: 0.9 },
    config: { batchSize: BATCH, numThreads: 1, numWorkers: 1, progressBar: false, logEvery: 100 },
  });
  await trainer.fit(data.slice(0, 20 * BATCH * worldSize), { numEpochs: 1 });
  const history = await trainer.fit(data, { numEpochs: 1 });
  const { steps, seconds } = history.epochs[0];
  return { stepsPerSecond: steps / seconds, samplesPerSecond: (steps * BATCH * worldSize) / seconds };
}

function twoRanks(): Rate {
  const cli = path.join(__dirname, '..', 'src', 'cli', 'main.js');
  const launched = spawnSync(
    process.execPath,
    [cli, 'launch', '--nproc-per-node', '2', '--master-port', '29613', __filename],
    {
      encoding: 'utf8',
      env: { ...process.env, BENCH_ROLE: 'rank' },
    },
  );
  if (launched.status !== 0) throw new Error(`the 2-rank run failed:\n${launched.stderr}`);
  const line = launched.stdout.split('\n').find((text) => text.startsWith('[rank 0] {'));
  if (line === undefined) throw new Error(`rank 0 printed no result:\n${launched.stdout}`);
  return JSON.parse(line.slice('[rank 0] '.length)) as Rate;
}

/** PyTorch's DDP on 2 ranks under torchrun, or why it cannot run here. */
function torchDdp(): Rate | string {
  // torch 1.13 on Python 3.11 needs --redirects/--tee given (their default fails to parse there).
  const script = path.join(__dirname, '..', '..', 'scripts', 'bench', 'ddp_torch.py');
  const args = ['-m', 'torch.distributed.run', '--redirects', '2', '--tee', '2', '--nproc_per_node', '2'];
  const run = spawnSync(PYTHON, [...args, '--master_port', '29614', script, String(STEPS)], { encoding: 'utf8' });
  const line = run.stdout.split('\n').find((text) => text.startsWith('{') || /\]:\{/.test(text));
  if (run.status !== 0 || line === undefined) return (run.stderr.trim().split('\n').at(-1) ?? 'failed').slice(0, 200);
  return JSON.parse(line.slice(line.indexOf('{'))) as Rate;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const medianRate = (rates: Rate[]): Rate => ({
  stepsPerSecond: median(rates.map((rate) => rate.stepsPerSecond)),
  samplesPerSecond: median(rates.map((rate) => rate.samplesPerSecond)),
});

/** Two 1-rank processes at the same time: their summed rate. */
async function twoIndependentProcesses(): Promise<Rate> {
  const run = () =>
    new Promise<Rate>((resolve, reject) => {
      const child = spawn(process.execPath, [__filename], { env: { ...process.env, BENCH_ROLE: 'rank' } });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.on('close', (status) =>
        status === 0 ? resolve(JSON.parse(stdout) as Rate) : reject(new Error(`a 1-rank process failed (${status})`)),
      );
    });
  const [a, b] = await Promise.all([run(), run()]);
  return {
    stepsPerSecond: (a.stepsPerSecond + b.stepsPerSecond) / 2,
    samplesPerSecond: a.samplesPerSecond + b.samplesPerSecond,
  };
}

async function main(): Promise<void> {
  if (process.env.BENCH_ROLE === 'rank') {
    console.log(JSON.stringify(await measure()));
    return;
  }
  const one = await measure();
  const ours: Rate[] = [];
  const theirs: Rate[] = [];
  let torchMissing: string | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    ours.push(twoRanks());
    const torch = torchMissing === undefined ? torchDdp() : torchMissing;
    if (typeof torch === 'string') torchMissing = torch;
    else theirs.push(torch);
  }
  const two = medianRate(ours);
  const apart = await twoIndependentProcesses();
  const efficiency = (rate: Rate) => `${((100 * rate.samplesPerSecond) / (2 * one.samplesPerSecond)).toFixed(0)}%`;
  const row = (name: string, rate: Rate, note: string) =>
    `${name.padEnd(42)} ${rate.stepsPerSecond.toFixed(1).padStart(8)} ${rate.samplesPerSecond.toFixed(0).padStart(10)}  ${note}`;
  console.log(`MLP 784-512-512-10, batch ${BATCH} per rank, SGD, ${STEPS} steps, 1 thread per rank, Gloo on 127.0.0.1`);
  console.log(`${''.padEnd(42)} ${'steps/s'.padStart(8)} ${'samples/s'.padStart(10)}  scaling efficiency`);
  console.log(row('1 rank x 1 thread', one, '-'));
  console.log(row(`2 ranks x 1 thread (DDP, median of ${ROUNDS})`, two, efficiency(two)));
  if (theirs.length > 0) {
    const torch = medianRate(theirs);
    console.log(
      row(
        'PyTorch DDP, 2 ranks (torchrun)',
        torch,
        `${efficiency(torch)}; firebrand ${(two.stepsPerSecond / torch.stepsPerSecond).toFixed(2)}x`,
      ),
    );
  } else {
    console.log(`PyTorch DDP: skipped (${PYTHON}: ${torchMissing})`);
  }
  console.log(row('2 lone processes x 1 thread, no DDP', apart, `${efficiency(apart)} (the cores' ceiling)`));
  console.log(
    `DDP's own cost: ${(100 * (1 - two.samplesPerSecond / apart.samplesPerSecond)).toFixed(0)}% of the ceiling's samples/s`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
