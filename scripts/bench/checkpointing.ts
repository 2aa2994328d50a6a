// Activation checkpointing: peak memory and steps/s of the GPT-mini and a ResNet-18 with and without
// config.activationCheckpointing, each run in its own process (peak RSS is per process).
//   npm run bench:checkpointing            (BENCH_STEPS, BENCH_THREADS change the run)
import { spawnSync } from 'node:child_process';

import { Dataset, ModelLike, Trainer } from '../../src';
import { GPTMini } from '../../examples/models/gpt';
import { ResNet18 } from '../../examples/models/resnet';

const STEPS = Number(process.env.BENCH_STEPS ?? 8);
const THREADS = Number(process.env.BENCH_THREADS ?? 2);

interface Workload {
  describe: string;
  model: () => ModelLike;
  checkpoint: string;
  data: (batches: number) => Dataset;
  batchSize: number;
}

const filled = (length: number, value: (i: number) => number) => Float32Array.from({ length }, (_, i) => value(i));

const workloads: Record<string, Workload> = {
  gpt: {
    describe: 'GPT-mini, 4 blocks of width 128, context 256, batch 16',
    model: () => new GPTMini({ vocab: 256, context: 256, dim: 128, heads: 4, layers: 4 }),
    checkpoint: 'transformer.h.*',
    batchSize: 16,
    data: (batches) =>
      Dataset.fromTokens(
        Int32Array.from({ length: batches * 16 * 256 + 1 }, (_, i) => (i * 31) % 256),
        { contextLength: 256 },
      ),
  },
  resnet: {
    describe: 'ResNet-18 of width 32, batch 256 of 3x32x32',
    model: () => new ResNet18({ inChannels: 3, width: 32, numClasses: 10 }),
    checkpoint: 'layer*',
    batchSize: 256,
    data: (batches) => {
      const samples = batches * 256;
      return Dataset.fromArrays({
        inputs: filled(samples * 3 * 32 * 32, (i) => Math.sin(i * 0.37)),
        inputShape: [samples, 3, 32, 32],
        targets: Int32Array.from({ length: samples }, (_, i) => i % 10),
      });
    },
  },
};

async function child(name: string, checkpointing: boolean): Promise<void> {
  const workload = workloads[name];
  const trainer = new Trainer({
    model: workload.model(),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3 },
    config: {
      batchSize: workload.batchSize,
      numThreads: THREADS,
      seed: 0,
      progressBar: false,
      shuffle: false,
      activationCheckpointing: checkpointing ? workload.checkpoint : undefined,
    },
  });
  const data = workload.data(STEPS);
  await trainer.fit(data.slice(0, workload.batchSize), { numEpochs: 1 });
  const started = performance.now();
  const history = await trainer.fit(data, { numEpochs: 1 });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    JSON.stringify({
      stepsPerSecond: history.epochs[0].steps / seconds,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      loss: history.epochs[0].loss,
    }),
  );
}

function main(): void {
  const [mode, name, flag] = process.argv.slice(2);
  if (mode === '--child') {
    child(name, flag === 'on').catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
    return;
  }
  console.log(`activation checkpointing, ${STEPS} steps, ${THREADS} threads; peak RSS of the process (MB), steps/s`);
  for (const [name, workload] of Object.entries(workloads)) {
    const runs = ['off', 'on'].map((flag) => {
      const result = spawnSync(process.execPath, [__filename, '--child', name, flag], { encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`${name} ${flag}: ${result.stderr}`);
      return JSON.parse(result.stdout.trim().split('\n').at(-1) as string) as {
        stepsPerSecond: number;
        peakRssMb: number;
        loss: number;
      };
    });
    const [off, on] = runs;
    console.log(
      `${name} (${workload.describe}; checkpointing '${workload.checkpoint}'): peak ${off.peakRssMb.toFixed(0)} -> ${on.peakRssMb.toFixed(0)} MB, ` +
        `${off.stepsPerSecond.toFixed(2)} -> ${on.stepsPerSecond.toFixed(2)} steps/s, same loss: ${off.loss === on.loss}`,
    );
  }
}

main();
