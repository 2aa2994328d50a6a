// npm run demo: trains a 2-conv CNN on Fashion-MNIST (Debian's
// dataset-fashion-mnist) from TypeScript and prints the test accuracy.
import { runtimeInfo, Trainer } from '../src';
import { demoCnn, loadFashionMnist, PIXEL_MEAN, PIXEL_STD } from './fashion-mnist';

// A shorter run for the test that keeps the demo working (test/demo.test.ts):
// DEMO_EPOCHS epochs on the first DEMO_TRAIN_SAMPLES / DEMO_TEST_SAMPLES images.
const numEpochs = Number(process.env.DEMO_EPOCHS ?? 4);
const trainSamples = process.env.DEMO_TRAIN_SAMPLES === undefined ? undefined : Number(process.env.DEMO_TRAIN_SAMPLES);
const testSamples = process.env.DEMO_TEST_SAMPLES === undefined ? undefined : Number(process.env.DEMO_TEST_SAMPLES);

async function main(): Promise<void> {
  const started = Date.now();
  const full = await loadFashionMnist({ mean: PIXEL_MEAN, std: PIXEL_STD });
  const train = full.train.slice(0, trainSamples);
  const test = full.test.slice(0, testSamples);
  const trainer = new Trainer({
    model: demoCnn(),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3 },
    config: { numEpochs, batchSize: 128, evalBatchSize: 1000, seed: 0 },
  });
  const info = runtimeInfo();
  console.log(
    `firebrand demo: Fashion-MNIST, ${train.length} training / ${test.length} test images, ` +
      `${trainer.parameterCount} parameters, libtorch ${info.torchVersion}, ${trainer.config.numThreads} threads, BLAS ${info.blas.vendor}`,
  );

  // The test set is evaluated after every epoch; the last evaluation is the result.
  const history = await trainer.fit(train, { evalData: test });
  const last = history.epochs[history.epochs.length - 1];
  const loss = last.valLoss ?? NaN;
  const accuracy = last.valAccuracy ?? 0;
  const minutes = (Date.now() - started) / 60000;
  console.log(
    `test accuracy ${accuracy.toFixed(4)}  test loss ${loss.toFixed(4)}  total time ${minutes.toFixed(1)} min`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
