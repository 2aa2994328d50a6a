// predict in firebrand (libtorch) against the exported ONNX file in
// onnxruntime-node, on the same models and inputs, in alternating rounds:
// latency at batch 1 (median) and throughput at batch 64. firebrand runs
// lowered for inference (predict's default: BatchNorm folded into the
// convolutions), layer by layer (optimizeForInference: false), and as a
// Model.load'ed folder. Informative: users pick the runtime. Each runner
// makes BURST calls in a row and its first is not counted: right after
// another runner's call that runner's threads still hold the cores
// (onnxruntime's spin after each run, libgomp's after each parallel region),
// and its memory (the runners' activations differ in size and layout), which
// timed the runner that came next, not its own speed.
//   npm run bench:onnx              (BENCH_REPEATS, BENCH_THREADS change the run)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import * as ort from 'onnxruntime-node';

import { Model, ModelLike, setNumThreads, torchvision, Trainer, type NumericArray } from '../../src';
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
    describe: 'MobileNetV3-Large, 3x224x224',
    model: () => torchvision.models.mobilenetV3Large(),
    sample: [3, 224, 224],
  },
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

const BURST = 3;

/**
 * Seconds of each runner's calls, sorted, the runners taking turns so that a busy moment hits them alike;
 * each turn `burst` calls in a row, of which all but the first are counted (one when `burst` is 1).
 */
async function alternating(runners: (() => Promise<unknown>)[], repeats: number, burst: number): Promise<number[][]> {
  for (const run of runners) await run();
  const seconds: number[][] = runners.map(() => []);
  for (let i = 0; i < repeats; i++) {
    for (const [index, run] of runners.entries()) {
      for (let call = 0; call < burst; call++) {
        const started = process.hrtime.bigint();
        await run();
        if (burst === 1 || call > 0) seconds[index].push(Number(process.hrtime.bigint() - started) / 1e9);
      }
    }
  }
  return seconds.map((values) => values.sort((a, b) => a - b));
}

const median = (values: number[]) => values[Math.floor(values.length / 2)];

/** One table row per batch size of `workload`: firebrand's three ways and onnxruntime-node's. */
async function measure(workload: Workload, folder: string): Promise<void> {
  const trainer = new Trainer({ model: workload.model(), loss: 'cross_entropy', optimizer: 'adamw' });
  const file = path.join(folder, 'model.onnx');
  await trainer.exportOnnx(file, { example: inputOf(workload, 2) });
  await trainer.save(path.join(folder, 'saved'));
  const loaded = await Model.load(path.join(folder, 'saved'));
  const session = await ort.InferenceSession.create(file, { intraOpNumThreads: THREADS, interOpNumThreads: 1 });
  for (const batch of [1, 64]) {
    const { data, shape } = inputOf(workload, batch);
    const type = data instanceof BigInt64Array ? 'int64' : 'float32';
    const feeds = { [session.inputNames[0]]: new ort.Tensor(type, data, shape) };
    const repeats = batch === 1 ? REPEATS : Math.max(3, Math.round(REPEATS / 4));
    const [lowered, layerByLayer, model, theirs] = await alternating(
      [
        () => trainer.predict(data, shape, { batchSize: batch }),
        () => trainer.predict(data, shape, { batchSize: batch, optimizeForInference: false }),
        () => loaded.predict(data, shape, { batchSize: batch }),
        () => session.run(feeds),
      ],
      repeats,
      BURST,
    );
    const figure = (seconds: number[]) =>
      batch === 1 ? `${(median(seconds) * 1000).toFixed(2)} ms` : `${(batch / median(seconds)).toFixed(0)} samples/s`;
    const cells = [lowered, layerByLayer, model, theirs].map(figure);
    console.log(
      `| ${workload.describe} | ${batch} | ${cells.join(' | ')} | ${(median(theirs) / median(lowered)).toFixed(2)}x |`,
    );
  }
  await session.release();
}

async function main(): Promise<void> {
  setNumThreads(THREADS);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bench-onnx-'));
  console.log(`onnxruntime-node ${ort.env.versions.common}, ${THREADS} threads each, ${REPEATS} repeats`);
  console.log('| model | batch | firebrand predict | layer by layer | Model.load | onnxruntime-node | ratio |');
  console.log('|---|---|---|---|---|---|---|');
  try {
    for (const workload of workloads) await measure(workload, folder);
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
  console.log('ratio: onnxruntime-node time / firebrand predict time (above 1: firebrand is faster)');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
