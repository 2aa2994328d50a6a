// npm run bench:loader: the data loader's throughput on Fashion-MNIST
// (shuffled, normalized in C++), alone and while training the demo CNN,
// against training on data that needs no loading work.
import os from 'node:os';

import { Dataset, runtimeInfo, Trainer, transforms } from '../src';
import { demoCnn, loadFashionMnist, PIXEL_MEAN, PIXEL_STD } from './fashion-mnist';

const BATCH = 128;
const TRAIN_STEPS = Number(process.env.BENCH_STEPS ?? 120);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

/** Steps per second of the demo CNN over `data` (one epoch of TRAIN_STEPS batches, after a warm-up). */
async function trainingSpeed(data: Dataset, config: { shuffle: boolean; numWorkers: number }): Promise<number> {
  const trainer = new Trainer({
    model: demoCnn(),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3 },
    config: { batchSize: BATCH, seed: 0, progressBar: false, ...config },
  });
  await trainer.fit(data.slice(0, BATCH * 5), { numEpochs: 1 });
  const history = await trainer.fit(data.slice(0, BATCH * TRAIN_STEPS), { numEpochs: 1 });
  return history.epochs[0].steps / history.epochs[0].seconds;
}

async function main(): Promise<void> {
  const { train: raw } = await loadFashionMnist();
  const loaded = raw.withTransforms(transforms.normalize({ mean: PIXEL_MEAN, std: PIXEL_STD }));
  const { train: preNormalized } = await loadFashionMnist({ mean: PIXEL_MEAN, std: PIXEL_STD });
  const info = runtimeInfo();
  console.log(
    `loader benchmark: Fashion-MNIST ${raw.length} images, batch ${BATCH}, ${os.cpus().length} CPUs, ` +
      `${info.numThreads} threads, libtorch ${info.torchVersion}, BLAS ${info.blas.vendor}`,
  );

  console.log('\nloader alone (shuffle + normalize, whole epoch, no training)');
  let loaderRate = 0;
  for (const numWorkers of [0, 1, 2]) {
    const result = await loaded.batches({ batchSize: BATCH, seed: 1, numWorkers }).drain();
    const rate = result.samples / result.seconds;
    if (numWorkers === 1) loaderRate = rate;
    console.log(`  numWorkers ${numWorkers}: ${Math.round(rate).toLocaleString('en-US').padStart(12)} samples/s`);
  }

  console.log(`\ndemo CNN training, ${TRAIN_STEPS} steps per run, best of ${ROUNDS}`);
  let withLoader = 0;
  let preBatched = 0;
  for (let round = 0; round < ROUNDS; round++) {
    withLoader = Math.max(withLoader, await trainingSpeed(loaded, { shuffle: true, numWorkers: 1 }));
    preBatched = Math.max(preBatched, await trainingSpeed(preNormalized, { shuffle: false, numWorkers: 0 }));
  }
  const trainSamples = withLoader * BATCH;
  console.log(
    `  with the loader (shuffle + normalize, 1 worker): ${withLoader.toFixed(2)} steps/s (${Math.round(trainSamples)} samples/s)`,
  );
  console.log(`  on pre-normalized data in order, no workers:     ${preBatched.toFixed(2)} steps/s`);
  console.log('\nresult');
  console.log(`  loader alone / training:     ${(loaderRate / trainSamples).toFixed(1)}x   (target >= 10x)`);
  console.log(`  training with loader / without: ${((100 * withLoader) / preBatched).toFixed(1)}%  (target >= 97%)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
