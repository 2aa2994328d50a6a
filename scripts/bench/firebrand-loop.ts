// The firebrand side of `npm run bench`: the bench workloads trained through
// the public TypeScript API with the default config (progress lines and
// onLog reports every 50 steps, one loader thread, shuffling) apart from the
// thread count. Prints one JSON line.
// For the models written as TypeScript modules (cnn-module, resnet, gpt) it also
// reports the trace and the whole set-up (trace, build, first-batch check).
//   node dist/scripts/bench/firebrand-loop.js <tiny|mlp|cnn|cnn-module|resnet|resnet-head|transformer|gpt> <steps> <threads|default> [transformer.pt]
//   node dist/scripts/bench/firebrand-loop.js generate-gpt <tokens> <threads> [no-cache]   (tokens/s of generate())
import { performance } from 'node:perf_hooks';

import { GPTMini } from '../../examples/models/gpt';
import { ResNet18 } from '../../examples/models/resnet';
import { ArrayDtype, Dataset, LossName, ModelLike, nn, OptimizerSpec, Trainer } from '../../src';
import { resolveModelSpec } from '../../src/nn/model-spec';
import { DemoCnn, demoCnn } from '../fashion-mnist';

// Batches per epoch: the Python and C++ loops cycle 16 pre-cut batches and have no epochs; firebrand's
// epochs are kept as long as a real dataset's would be (its per-epoch set-up is not per-step cost),
// except where 16 already make an epoch of several seconds.
const BATCHES: Record<string, number> = {
  tiny: 256,
  mlp: 64,
  cnn: 16,
  'cnn-module': 16,
  resnet: 16,
  'resnet-head': 16,
  transformer: 16,
  gpt: 16,
};

interface Workload {
  model: ModelLike;
  loss: LossName;
  optimizer: OptimizerSpec;
  batchSize: number;
  data: Dataset;
  freeze?: string[];
}

/** Input and target fields filled in place (Dataset.allocate: one copy of the data, as the loops hold). */
function fields(
  input: { dtype: ArrayDtype; shape: number[]; value: (i: number) => number | bigint },
  target: { dtype: ArrayDtype; shape: number[]; value: (i: number) => number | bigint },
): Dataset {
  const { dataset, arrays } = Dataset.allocate({ input, target });
  for (const [name, spec] of [
    ['input', input],
    ['target', target],
  ] as const) {
    const array = arrays[name];
    for (let i = 0; i < array.length; i++) array[i] = spec.value(i);
  }
  return dataset;
}

const uniform = (seed: number) => (i: number) => Math.sin(i * 12.9898 + seed) * 0.5;
const classes = (i: number) => BigInt((i * 7) % 10);

function workload(name: string, scriptPath: string | undefined): Workload {
  const batches = BATCHES[name];
  switch (name) {
    case 'tiny': {
      const samples = batches * 32;
      return {
        model: nn.sequential(nn.linear(16, 16), nn.relu(), nn.linear(16, 1)),
        loss: 'mse',
        optimizer: { name: 'sgd', lr: 0.01 },
        batchSize: 32,
        data: fields(
          { dtype: 'float32', shape: [samples, 16], value: uniform(1) },
          { dtype: 'float32', shape: [samples, 1], value: uniform(2) },
        ),
      };
    }
    case 'mlp': {
      const samples = batches * 128;
      return {
        model: nn.sequential(nn.linear(784, 256), nn.relu(), nn.linear(256, 256), nn.relu(), nn.linear(256, 10)),
        loss: 'cross_entropy',
        optimizer: { name: 'adam', lr: 1e-3 },
        batchSize: 128,
        data: fields(
          { dtype: 'float32', shape: [samples, 784], value: uniform(3) },
          { dtype: 'int64', shape: [samples], value: classes },
        ),
      };
    }
    case 'cnn':
    case 'cnn-module': {
      const samples = batches * 64;
      return {
        model: name === 'cnn' ? demoCnn() : new DemoCnn(),
        loss: 'cross_entropy',
        optimizer: { name: 'adamw', lr: 1e-3 },
        batchSize: 64,
        data: fields(
          { dtype: 'float32', shape: [samples, 1, 28, 28], value: uniform(4) },
          { dtype: 'int64', shape: [samples], value: classes },
        ),
      };
    }
    case 'resnet':
    case 'resnet-head': {
      const samples = batches * 32;
      return {
        model: new ResNet18({ inChannels: 3, width: 16, numClasses: 10 }),
        loss: 'cross_entropy',
        optimizer: { name: 'adamw', lr: 1e-3 },
        batchSize: 32,
        data: fields(
          { dtype: 'float32', shape: [samples, 3, 32, 32], value: uniform(5) },
          { dtype: 'int64', shape: [samples], value: classes },
        ),
        // Fine-tuning the head: everything but fc frozen.
        freeze: name === 'resnet-head' ? ['conv1', 'bn1', 'layer*'] : undefined,
      };
    }
    case 'gpt': {
      // GPT-mini on bytes: 256 tokens, context 64, width 128, 4 heads, 2 blocks (examples/models/gpt.ts).
      const samples = batches * 16;
      return {
        model: new GPTMini({ vocab: 256, context: 64, dim: 128, heads: 4, layers: 2 }),
        loss: 'cross_entropy',
        optimizer: { name: 'adamw', lr: 1e-3 },
        batchSize: 16,
        data: fields(
          { dtype: 'int64', shape: [samples, 64], value: (i) => BigInt((i * 31) % 256) },
          { dtype: 'int64', shape: [samples, 64], value: (i) => BigInt((i * 31 + 31) % 256) },
        ),
      };
    }
    case 'transformer': {
      if (scriptPath === undefined)
        throw new Error('transformer needs the TorchScript file (python_loop.py export-transformer)');
      const samples = batches * 32;
      return {
        model: nn.torchScript(scriptPath),
        loss: 'cross_entropy',
        optimizer: { name: 'adamw', lr: 1e-3 },
        batchSize: 32,
        data: fields(
          { dtype: 'int64', shape: [samples, 64], value: (i) => BigInt((i * 31) % 1000) },
          { dtype: 'int64', shape: [samples], value: classes },
        ),
      };
    }
    default:
      throw new Error(`unknown workload ${name}`);
  }
}

/**
 * generate() from the gpt workload's model, as python_loop.py generate-gpt samples: 5 runs of `tokens`
 * after a 4-token prompt (60 fill the 64 positions), with or without the key/value cache. Tokens/s.
 */
async function generation(tokens: number, threads: number, kvCache: boolean): Promise<void> {
  const { model } = workload('gpt', undefined);
  const trainer = new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: 'adamw',
    config: { numThreads: threads, seed: 0 },
  });
  await trainer.setup();
  const started = performance.now();
  let count = 0;
  for (let run = 0; run < 5; run++) {
    const options = { maxNewTokens: tokens, temperature: 0.8, topK: 20, seed: run, contextLength: 64, kvCache };
    for await (const token of trainer.generate([1, 2, 3, 4], options)) count += token >= 0 ? 1 : 0;
  }
  console.log(JSON.stringify({ tokensPerSecond: count / ((performance.now() - started) / 1000) }));
}

async function main(): Promise<void> {
  const [name, stepsText, threadsText, scriptPath] = process.argv.slice(2);
  if (name === 'generate-gpt') return generation(Number(stepsText), Number(threadsText), scriptPath !== 'no-cache');
  const steps = Number(stepsText);
  const { model, loss, optimizer, batchSize, data, freeze } = workload(name, scriptPath);
  // A module model is traced (nn.sequential of layers is not: C++ runs its layers in order).
  const traced = performance.now();
  const traceSeconds = resolveModelSpec(model).type === 'graph' ? (performance.now() - traced) / 1000 : undefined;
  // 'default': the thread count the trainer chooses itself (bench:contention).
  const numThreads = threadsText === 'default' ? undefined : Number(threadsText);
  const trainer = new Trainer({ model, loss, optimizer, config: { batchSize, numThreads, seed: 0, freeze } });
  const settingUp = performance.now();
  await trainer.setup();
  const setupSeconds = (performance.now() - settingUp) / 1000;
  // The first fit takes one step: the time to a first step, from process start.
  await trainer.fit(data.slice(0, batchSize), { numEpochs: 1 });
  const firstStepSeconds = performance.now() / 1000;
  const started = performance.now();
  const history = await trainer.fit(data, { numEpochs: Math.ceil(steps / BATCHES[name]) });
  const seconds = (performance.now() - started) / 1000;
  const trained = history.epochs.reduce((sum, epoch) => sum + epoch.steps, 0);
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  console.log(
    JSON.stringify({
      stepsPerSecond: trained / seconds,
      firstStepSeconds,
      peakRssMb,
      traceSeconds,
      setupSeconds,
      loss: history.epochs.at(-1)?.loss,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
