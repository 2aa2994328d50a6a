// Training runs that compare an optimizer's fused step with libtorch's per-op
// step (fused: false), for test/fused-optimizers.test.ts and its child process.
import { Dataset, ModelSpec, nn, OptimizerSpec, SchedulerSpec, Trainer } from '../../src';
import { seededRandom } from './helpers';

const samples = 96;
const features = 300;

function regressionData(): Dataset {
  const random = seededRandom(7);
  const inputs = new Float32Array(samples * features).map(() => random() * 2 - 1);
  const targets = new Float32Array(samples * 3).map(() => random() * 2 - 1);
  return Dataset.fromArrays({ inputs, inputShape: [samples, features], targets, targetShape: [samples, 3] });
}

/** 300 x 120 = 36,000 first-layer weights: above libtorch's grain size (32,768), so updates split over threads. */
export const mlp = (): ModelSpec =>
  nn.sequential(nn.linear(features, 120), nn.relu(), nn.linear(120, 37), nn.tanh(), nn.linear(37, 3));

export type Weights = Record<string, ArrayLike<number>>;

export interface RunOptions {
  lrScheduler?: SchedulerSpec;
  numThreads?: number;
}

/** The weights after 24 steps of regression on fixed data. */
export async function trainedWeights(
  model: ModelSpec,
  optimizer: OptimizerSpec,
  options: RunOptions = {},
): Promise<Weights> {
  const trainer = new Trainer({
    model,
    loss: 'mse',
    optimizer,
    lrScheduler: options.lrScheduler,
    config: { numEpochs: 4, batchSize: 16, seed: 3, progressBar: false, numThreads: options.numThreads ?? 1 },
  });
  await trainer.fit(regressionData());
  const state = await trainer.stateDict();
  return Object.fromEntries(Object.entries(state).map(([name, tensor]) => [name, tensor.data as ArrayLike<number>]));
}

/** The weights of the fused and of the per-op step, from the same start. */
export async function bothSteps(
  model: () => ModelSpec,
  optimizer: OptimizerSpec,
  options: RunOptions = {},
): Promise<[Weights, Weights]> {
  const fused = await trainedWeights(model(), optimizer, options);
  const perOp = await trainedWeights(model(), { ...optimizer, fused: false } as OptimizerSpec, options);
  return [fused, perOp];
}

/** The first element that differs in bits, as 'name[i]', or undefined. */
export function firstDifference(a: Weights, b: Weights): string | undefined {
  for (const name of Object.keys(b)) {
    if (!(name in a)) return name;
    const i = Array.from(b[name]).findIndex((value, index) => !Object.is(value, a[name][index]));
    if (i >= 0) return `${name}[${i}]: ${a[name][i]} vs ${b[name][i]}`;
  }
  return undefined;
}
