// predict in firebrand (libtorch) against the exported ONNX file in
// onnxruntime-node, on the same models and inputs: latency at batch 1
// (median) and throughput at batch 64. firebrand runs a Model.load'ed folder,
// lowered for inference (predict's default: BatchNorm folded into the
// convolutions, activations fused) and layer by layer (optimizeForInference:
// false). Informative: users pick the runtime. Each runner lives in a process
// of its own, as a served model does, and the runners take turns: in one
// process the runner before still held the cores and memory (onnxruntime's
// threads spin after each run, libgomp's after each parallel region, and each
// runtime's thread pool made the other's sleep and wake), which timed the
// runner that came before, not the one measured. Each turn is BURST calls in
// a row, the first not counted, SETTLE_MS after the turn before.
//   npm run bench:onnx              (BENCH_REPEATS, BENCH_THREADS change the run)
import { fork, type ChildProcess } from 'node:child_process';
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
// Between turns, for the runner before to go quiet (its threads' spin after its last call ends within it).
const SETTLE_MS = 100;
const RUNNERS = ['predict', 'layer by layer', 'onnxruntime'] as const;
type RunnerKind = (typeof RUNNERS)[number];

/** A runner's process: loads its runtime on `folder`'s files, then answers each batch size with its burst's seconds. */
async function serveRunner(kind: RunnerKind, folder: string, workload: Workload): Promise<void> {
  setNumThreads(THREADS);
  const made = new Map<number, ReturnType<typeof inputOf>>();
  const inputs = (batch: number) => made.get(batch) ?? made.set(batch, inputOf(workload, batch)).get(batch)!;
  let run: (batch: number) => Promise<unknown>;
  if (kind === 'onnxruntime') {
    const session = await ort.InferenceSession.create(path.join(folder, 'model.onnx'), {
      intraOpNumThreads: THREADS,
      interOpNumThreads: 1,
    });
    run = (batch) => {
      const { data, shape } = inputs(batch);
      const type = data instanceof BigInt64Array ? 'int64' : 'float32';
      return session.run({ [session.inputNames[0]]: new ort.Tensor(type, data, shape) });
    };
  } else {
    const model = await Model.load(path.join(folder, 'saved'));
    const optimizeForInference = kind === 'predict';
    run = (batch) => {
      const { data, shape } = inputs(batch);
      return model.predict(data, shape, { batchSize: batch, optimizeForInference });
    };
  }
  process.on('message', async (batch: number) => {
    const seconds: number[] = [];
    for (let call = 0; call < BURST; call++) {
      const started = process.hrtime.bigint();
      await run(batch);
      if (call > 0) seconds.push(Number(process.hrtime.bigint() - started) / 1e9);
    }
    process.send!(seconds);
  });
  process.send!('ready');
}

function startRunner(kind: RunnerKind, folder: string, workload: number): Promise<ChildProcess> {
  const child = fork(__filename, ['runner', kind, folder, String(workload)]);
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the ${kind} runner exited (${code}) before it was ready`)));
  });
}

const turn = (child: ChildProcess, batch: number) =>
  new Promise<number[]>((resolve) => {
    child.once('message', (seconds) => resolve(seconds as number[]));
    child.send(batch);
  });

/** Seconds of each runner's calls, sorted, the runners taking turns so that a busy moment hits them alike. */
async function alternating(children: ChildProcess[], batch: number, repeats: number): Promise<number[][]> {
  for (const child of children) await turn(child, batch);
  const seconds: number[][] = children.map(() => []);
  for (let i = 0; i < repeats; i++) {
    for (const [index, child] of children.entries()) {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      seconds[index].push(...(await turn(child, batch)));
    }
  }
  return seconds.map((values) => values.sort((a, b) => a - b));
}

const median = (values: number[]) => values[Math.floor(values.length / 2)];

/** One table row per batch size of the workload: firebrand's two ways and onnxruntime-node's. */
async function measure(index: number, folder: string): Promise<void> {
  const workload = workloads[index];
  const trainer = new Trainer({ model: workload.model(), loss: 'cross_entropy', optimizer: 'adamw' });
  await trainer.exportOnnx(path.join(folder, 'model.onnx'), { example: inputOf(workload, 2) });
  await trainer.save(path.join(folder, 'saved'));
  const children = await Promise.all(RUNNERS.map((kind) => startRunner(kind, folder, index)));
  try {
    for (const batch of [1, 64]) {
      const repeats = batch === 1 ? REPEATS : Math.max(3, Math.round(REPEATS / 4));
      const [lowered, layerByLayer, theirs] = await alternating(children, batch, repeats);
      const figure = (seconds: number[]) =>
        batch === 1 ? `${(median(seconds) * 1000).toFixed(2)} ms` : `${(batch / median(seconds)).toFixed(0)} samples/s`;
      const cells = [lowered, layerByLayer, theirs].map(figure);
      console.log(
        `| ${workload.describe} | ${batch} | ${cells.join(' | ')} | ${(median(theirs) / median(lowered)).toFixed(2)}x |`,
      );
    }
  } finally {
    for (const child of children) child.kill();
  }
}

async function main(): Promise<void> {
  setNumThreads(THREADS);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bench-onnx-'));
  console.log(`onnxruntime-node ${ort.env.versions.common}, ${THREADS} threads each, ${REPEATS} repeats`);
  console.log('| model | batch | firebrand predict | layer by layer | onnxruntime-node | ratio |');
  console.log('|---|---|---|---|---|---|');
  try {
    for (const index of workloads.keys()) await measure(index, folder);
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
  console.log('ratio: onnxruntime-node time / firebrand predict time (above 1: firebrand is faster)');
}

const [role, kind, folder, workload] = process.argv.slice(2);
(role === 'runner' ? serveRunner(kind as RunnerKind, folder, workloads[Number(workload)]) : main()).catch((error) => {
  console.error(error);
  process.exit(1);
});
