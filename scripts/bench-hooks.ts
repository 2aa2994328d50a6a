// npm run bench:hooks: what per-batch hooks cost. The tiny MLP (16-16-1, batch
// 32, SGD, MSE: per-step overhead dominates) trains with no hooks, with a
// no-op postTrainBatch (the C++ loop waits for JS every batch), and with an
// onLog observer (not waited for), in alternating rounds; medians printed.
import { Callback, Dataset, nn, Trainer } from '../src';

const STEPS = Number(process.env.BENCH_STEPS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

function tinyData(): Dataset {
  const samples = STEPS * 32;
  const inputs = new Float32Array(samples * 16).map((_, i) => Math.sin(i));
  const targets = new Float32Array(samples).map((_, i) => Math.cos(i));
  return Dataset.fromArrays({ inputs, inputShape: [samples, 16], targets });
}

async function stepsPerSecond(data: Dataset, callbacks: Callback[]): Promise<number> {
  const trainer = new Trainer({
    model: nn.sequential(nn.linear(16, 16), nn.relu(), nn.linear(16, 1)),
    loss: 'mse',
    optimizer: { name: 'sgd', lr: 0.01 },
    config: { batchSize: 32, numThreads: 1, numWorkers: 0, shuffle: false, progressBar: false, logEvery: 50 },
    callbacks,
  });
  await trainer.fit(data.slice(0, 32 * 200), { numEpochs: 1 });
  const history = await trainer.fit(data, { numEpochs: 1 });
  return history.epochs[0].steps / history.epochs[0].seconds;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const data = tinyData();
  const variants: [string, Callback[]][] = [
    ['no hooks', []],
    ['onLog observer', [{ onLog: () => undefined }]],
    ['no-op postTrainBatch', [{ postTrainBatch: () => undefined }]],
  ];
  const results = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, callbacks] of variants) results.get(name)?.push(await stepsPerSecond(data, callbacks));
  }
  const base = median(results.get('no hooks') as number[]);
  console.log(`tiny MLP, ${STEPS} steps, 1 thread, median of ${ROUNDS} alternating rounds`);
  for (const [name] of variants) {
    const value = median(results.get(name) as number[]);
    console.log(`${name.padEnd(22)} ${value.toFixed(0).padStart(6)} steps/s  ${(value / base).toFixed(2)}x`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
