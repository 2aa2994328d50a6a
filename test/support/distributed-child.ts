// One rank of the data-parallel runs of test/distributed.test.ts, started by
// `firebrand launch` or by the test with torchrun's environment. Trains the
// blob MLP with plain SGD and prints one JSON line: its rank, history and
// weights, or the error that ended it. Modes (argv[2]):
//   train            train; argv[3] (optional) is an outputDir to checkpoint and log
//                    in (with a progress bar), argv[4] (optional) maxSteps
//   train-own-volume as train, each rank with its own outputDir (argv[3] for rank 0, argv[3]-rank<R> for the
//                    others): a volume per pod, where only rank 0's holds the checkpoints
//   train-slowly     as train, each step 0.25 s longer (a run that lasts while late processes come)
//   train-elastic    as train-slowly with argv[3] as outputDir, resuming at any world size
//                    (config.resume.worldSize 'reshard'): a job that lost a node goes on
//   train-module     train the same MLP written as a TypeScript module (BlobMlp)
//   train-sync-bn    train BlobBatchNormMlp with config.distributed.syncBatchNorm
//   train-unsynced-bn  the same without: each rank normalizes by its own batch
//   train-llama      fine-tune the tiny pretrained Llama of test/fixtures/pretrained/llama (AdamW)
//   train-llama-masked  the same on targets partly ignored (-100), 2 micro-batches per step
//   die-at-step-5    rank 1 exits at step 5; the others must fail, not hang
//   hang-at-step-5   rank 1 stops answering at step 5; the others must time out
//   stop-at-step-5   rank 1 stops itself (SIGSTOP) at step 5; the others time out, and launch blames rank 1
//   collectives      barrier, allReduce (sum, mean, max, min), allGather and broadcast of numbers and
//                    tensors on every rank; then allReduce from a per-batch hook during fit, refused
//   evaluate-on-rank-0  rank 0 alone evaluates, with { distributed: false } and then as a collective
//                    (which must fail, saying it is one); rank 1 idles
//   adamw-steps      argv[3] 'ddp' or 'zero' (config.distributed.zeroRedundancyOptimizer), argv[4] an outputDir
//                    to checkpoint in and resume from, argv[5] maxSteps: the Llama fine-tuned with AdamW; prints
//                    the weights and the bytes of optimizer state the rank holds
//   throw-at-step-5  rank 1's hook throws at step 5 and the process stays alive (a service that caught
//                    the error); the others must stop at once, naming rank 1's error
import path from 'node:path';

import { BatchResult, Callback, Dataset, F, fromPretrained, nn, Tensor, Trainer } from '../../src';
import type { Module } from '../../src/nn/module/module';
import { blobDataset, blobTrainer, seededRandom } from './helpers';
import { maskedTokens } from './masked-tokens';

/** The blob MLP written as a TypeScript module: its forward is a traced graph. */
export class BlobMlp extends nn.Module {
  fc1 = nn.linear(4, 16);
  fc2 = nn.linear(16, 2);
  forward(x: Tensor): Tensor {
    return this.fc2.forward(F.relu(this.fc1.forward(x)));
  }
}

/** The blob MLP with a batch norm between its layers (a syncBatchNorm with config.distributed.syncBatchNorm). */
export class BlobBatchNormMlp extends nn.Module {
  fc1 = nn.linear(4, 16);
  norm = nn.batchNorm1d(16);
  fc2 = nn.linear(16, 2);
  forward(x: Tensor): Tensor {
    return this.fc2.forward(F.relu(this.norm.forward(this.fc1.forward(x))));
  }
}

/**
 * The run all ranks (and the single-process reference in the test) make, with `batchSize` per rank:
 * gradients accumulated over 2 micro-batches (all-reduced on the second only) and clipped to norm 0.5
 * (which must see the averaged gradients) before each SGD step.
 */
export function distributedTrainer(
  batchSize: number,
  config: Record<string, unknown> = {},
  callbacks: Callback[] = [],
  model?: Module,
): Trainer {
  const run = { numEpochs: 3, batchSize, gradientAccumulationSteps: 2, maxGradNorm: 0.5, seed: 7, numWorkers: 0 };
  return blobTrainer(
    { ...run, distributed: { timeout: 20 }, ...config },
    {
      optimizer: { name: 'sgd', lr: 0.05 },
      callbacks,
      ...(model ? { model } : {}),
    },
  );
}

/** The tiny pretrained Llama fine-tuned with AdamW, `batchSize` windows of 8 tokens per rank, 2 epochs. */
export async function llamaTrainer(
  batchSize: number,
  gradientAccumulationSteps = 1,
  config: Record<string, unknown> = {},
): Promise<Trainer> {
  const folder = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'pretrained', 'llama');
  return new Trainer({
    model: await fromPretrained(folder),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3 },
    config: {
      numEpochs: 2,
      batchSize,
      gradientAccumulationSteps,
      seed: 7,
      numWorkers: 0,
      numThreads: 1,
      progressBar: false,
      distributed: { timeout: 20 },
      ...config,
    },
  });
}

/** 32 windows of 8 token ids below the Llama fixture's vocabulary (64). */
export function llamaData(): Dataset {
  const random = seededRandom(11);
  return Dataset.fromTokens(
    Array.from({ length: 32 * 8 + 1 }, () => Math.floor(random() * 64)),
    { contextLength: 8 },
  );
}

export const trainData = () => blobDataset(256, 4, 3);
export const evalData = () => blobDataset(51, 4, 4);

/** Rank 0 evaluates alone, as `if rank == 0: evaluate()`; rank 1 sets up and idles past the timeout. */
async function evaluateOnRankZero(rank: number): Promise<void> {
  const trainer = distributedTrainer(8, { distributed: { timeout: 3 } });
  await trainer.setup();
  if (rank !== 0) {
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    return;
  }
  const local = await trainer.evaluate(evalData(), { distributed: false });
  const collective = await trainer.evaluate(evalData()).then(
    () => undefined,
    (error: { code?: string; message: string }) => ({ code: error.code, message: error.message }),
  );
  console.log(JSON.stringify({ rank, local, error: collective }));
}

/** The public collectives on each rank, printed; one called inside a training step is refused. */
async function collectives(rank: number): Promise<void> {
  const inStep: string[] = [];
  const probe: Callback = {
    async postTrainBatch({ globalStep }: BatchResult) {
      if (globalStep !== 1 || inStep.length > 0) return;
      inStep.push(await trainer.ranks.allReduce([1]).then(String, (error: Error) => error.message));
    },
  };
  const trainer = distributedTrainer(8, { maxSteps: 2 }, [probe]);
  await trainer.fit(trainData());
  const { ranks } = trainer;
  await ranks.barrier();
  const tensor = { data: Float32Array.from([rank, rank + 0.5]), shape: [2] };
  const report = {
    rank,
    isMainProcess: ranks.isMainProcess,
    sum: await ranks.allReduce([rank, 10 * rank]),
    mean: await ranks.allReduce([rank], 'mean'),
    max: await ranks.allReduce(tensor, 'max'),
    min: await ranks.allReduce([rank], 'min'),
    gathered: await ranks.allGather([rank * 3]),
    broadcast: await ranks.broadcast(tensor, 1),
    uneven: await ranks.allGather(new Array(rank + 1).fill(0)).then(String, (error: Error) => error.message),
    inStep,
  };
  console.log(JSON.stringify(report, (_, value) => (value instanceof Float32Array ? Array.from(value) : value)));
}

/** The state dict's values as plain arrays, by name. */
async function weightsOf(trainer: Trainer): Promise<Record<string, number[]>> {
  return Object.fromEntries(
    Object.entries(await trainer.stateDict()).map(([name, tensor]) => [
      name,
      Array.from(tensor.data as ArrayLike<number | bigint>, Number),
    ]),
  );
}

/** AdamW on the Llama, as DDP or with the optimizer state sharded; resumes from argv[4]'s checkpoints. */
async function adamwSteps(rank: number): Promise<void> {
  const [, , , sharding, outputDir, maxSteps] = process.argv;
  const trainer = await llamaTrainer(8, 1, {
    numEpochs: 50,
    maxSteps: Number(maxSteps),
    distributed: { timeout: 20, zeroRedundancyOptimizer: sharding === 'zero' },
    outputDir,
    saveEvery: 25,
    resumeFromCheckpoint: true,
  });
  const history = await trainer.fit(llamaData());
  const optimizerStateBytes = await trainer.optimizerStateBytes();
  console.log(
    JSON.stringify({
      rank,
      worldSize: trainer.worldSize,
      history,
      weights: await weightsOf(trainer),
      optimizerStateBytes,
    }),
  );
}

/** The model a training mode's ranks train (undefined: blobTrainer's sequential MLP). */
function modelOf(mode: string): Module | undefined {
  if (mode === 'train-module') return new BlobMlp();
  return mode.endsWith('-bn') ? new BlobBatchNormMlp() : undefined;
}

async function main(): Promise<void> {
  const mode = process.argv[2] ?? 'train';
  if (mode === 'adamw-steps') return adamwSteps(Number(process.env.RANK));
  if (mode === 'collectives') return collectives(Number(process.env.RANK));
  if (mode === 'evaluate-on-rank-0') return evaluateOnRankZero(Number(process.env.RANK));
  const rank = Number(process.env.RANK ?? process.env.SLURM_PROCID); // torchrun's, or a Slurm task's
  const config: Record<string, unknown> = {};
  if (['train', 'train-own-volume', 'train-elastic'].includes(mode) && process.argv[3] !== undefined) {
    Object.assign(config, {
      outputDir: mode !== 'train-own-volume' || rank === 0 ? process.argv[3] : `${process.argv[3]}-rank${rank}`,
      saveEvery: 5,
      resumeFromCheckpoint: true,
      loggers: ['jsonl'],
      progressBar: true,
      logEvery: 4,
      ...(mode === 'train-elastic' ? { resume: { worldSize: 'reshard' } } : {}),
    });
  }
  if (process.argv[4] !== undefined) config.maxSteps = Number(process.argv[4]);
  const healthy = [
    'train',
    'train-own-volume',
    'train-slowly',
    'train-elastic',
    'train-module',
    'train-llama',
    'train-llama-masked',
    'train-sync-bn',
    'train-unsynced-bn',
  ].includes(mode);
  if (mode === 'train-sync-bn') config.distributed = { timeout: 20, syncBatchNorm: true };
  // A dead rank must fail the others at once, long before a timeout; a hung one by its timeout.
  if (!healthy) config.distributed = { timeout: ['hang-at-step-5', 'stop-at-step-5'].includes(mode) ? 3 : 60 };
  const faulty: Callback = {
    async postTrainBatch({ globalStep }: BatchResult) {
      if (globalStep !== 5) return;
      if (mode === 'die-at-step-5') process.exit(7);
      if (mode === 'throw-at-step-5') throw new Error('the hook of rank 1 broke at step 5');
      if (mode === 'stop-at-step-5') process.kill(process.pid, 'SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, 60_000));
    },
  };
  const slowly: Callback = { postTrainBatch: () => new Promise((resolve) => setTimeout(resolve, 250)) };
  const faults = !healthy && rank === 1 ? [faulty] : ['train-slowly', 'train-elastic'].includes(mode) ? [slowly] : [];
  const llama = mode.startsWith('train-llama');
  const masked = mode === 'train-llama-masked';
  const trainer = llama
    ? await llamaTrainer(masked ? 2 : 8, masked ? 2 : 1)
    : distributedTrainer(8, config, faults, modelOf(mode));
  const started = Date.now();
  try {
    const history = llama
      ? await trainer.fit(masked ? maskedTokens([], 32) : llamaData())
      : await trainer.fit(trainData(), { evalData: evalData() });
    console.log(JSON.stringify({ rank, worldSize: trainer.worldSize, history, weights: await weightsOf(trainer) }));
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    console.log(JSON.stringify({ rank, error: { code, message }, seconds: (Date.now() - started) / 1000 }));
    process.exitCode = 1;
    // A service catches the error and lives on: its peers must not wait for it.
    if (mode === 'throw-at-step-5' && rank === 1) await new Promise((resolve) => setTimeout(resolve, 20_000));
  }
}

if (require.main === module) void main();
