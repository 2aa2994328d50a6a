// predict in firebrand (libtorch) against the exported ONNX file in
// onnxruntime-node, on the same models and inputs: latency at batch 1 (median)
// and throughput at batch 64. Informative: users pick the runtime.
//   npm run bench:onnx              (BENCH_REPEATS, BENCH_THREADS change the run)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import * as ort from 'onnxruntime-node';

import { ModelLike, setNumThreads, torchvision, Trainer, type NumericArray } from '../../src';
import { GPTMini } from '../../examples/models/gpt';
import { demoCnn } from '../fashion-mnist';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 20);
const THREADS = Number(process.env.BENCH_THREADS ?? os.availableParallelism());

interface Workload {
  describe: string;
  model: () => ModelLike;
  sample: number[];
  tokens?: number;
}

const workloads: Workload[] = [
  { describe: 'demo CNN, 1x28x28', model: demoCnn, sample: [1, 28, 28] },
  { describe: 'ResNet-18, 3x224x224', model: () => torchvision.models.resnet18(), sample: [3, 224, 224] },
  {
    describe: 'GPT-mini (4 blocks of 128), 128 tokens',
    model: () => new GPTMini({ vocab: 256, context: 128, dim: 128, heads: 4, layers: 4 }),
    sample: [128],
    tokens: 256,
  },
];

function inputOf(workload: Workload, batch: number): { data: NumericArray; shape: number[] } {
  const shape = [batch, ...workload.sample];
  const size = shape.reduce((a, b) => a * b, 1);
  if (workload.tokens !== undefined) {
    return { data: BigInt64Array.from({ length: size }, (_, i) => BigInt((i * 31) % workload.tokens!)), shape };
  }
  return { data: Float32Array.from({ length: size }, (_, i) => Math.sin(i)), shape };
}

async function timed(run: () => Promise<unknown>, repeats: number): Promise<number[]> {
  await run();
  const seconds: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const started = process.hrtime.bigint();
    await run();
    seconds.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
  return seconds.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  setNumThreads(THREADS);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bench-onnx-'));
  console.log(`onnxruntime-node ${ort.env.versions.common}, ${THREADS} threads each, ${REPEATS} repeats`);
  console.log('| model | batch | firebrand | onnxruntime-node | ratio |');
  console.log('|---|---|---|---|---|');
  try {
    for (const workload of workloads) {
      const trainer = new Trainer({ model: workload.model(), loss: 'cross_entropy', optimizer: 'adamw' });
      const file = path.join(folder, 'model.onnx');
      const example = inputOf(workload, 2);
      await trainer.exportOnnx(file, { example });
      const session = await ort.InferenceSession.create(file, { intraOpNumThreads: THREADS, interOpNumThreads: 1 });
      for (const batch of [1, 64]) {
        const { data, shape } = inputOf(workload, batch);
        const type = data instanceof BigInt64Array ? 'int64' : 'float32';
        const feeds = { [session.inputNames[0]]: new ort.Tensor(type, data, shape) };
        const repeats = batch === 1 ? REPEATS : Math.max(3, Math.round(REPEATS / 4));
        const ours = await timed(() => trainer.predict(data, shape, { batchSize: batch }), repeats);
        const theirs = await timed(() => session.run(feeds), repeats);
        const median = (values: number[]) => values[Math.floor(values.length / 2)];
        const figure = (seconds: number) =>
          batch === 1 ? `${(seconds * 1000).toFixed(2)} ms` : `${(batch / seconds).toFixed(0)} samples/s`;
        console.log(
          `| ${workload.describe} | ${batch} | ${figure(median(ours))} | ${figure(median(theirs))} | ` +
            `${(median(theirs) / median(ours)).toFixed(2)}x |`,
        );
      }
      await session.release();
    }
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
  console.log('ratio: onnxruntime-node time / firebrand time (above 1: firebrand is faster)');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
