// npm run demo: trains a 2-conv CNN on Fashion-MNIST (Debian's
// dataset-fashion-mnist) from TypeScript and prints the test accuracy.
import fs from 'node:fs';
import path from 'node:path';

import { Dataset, nn, runtimeInfo, Trainer } from '../src';

const dataDir = process.env.FASHION_MNIST_DIR ?? '/usr/share/datasets/fashion-mnist';
const numEpochs = Number(process.env.DEMO_EPOCHS ?? 4);

async function main(): Promise<void> {
  const file = (name: string) => path.join(dataDir, name);
  if (!fs.existsSync(file('train-images-idx3-ubyte.gz'))) {
    console.error(`Fashion-MNIST not found in ${dataDir}. On Debian/Ubuntu: apt-get install dataset-fashion-mnist ` +
      '(or run scripts/setup-debian.sh as root), or set FASHION_MNIST_DIR.');
    process.exit(1);
  }
  const started = Date.now();
  // Fashion-MNIST's pixel mean and standard deviation.
  const idxOptions = { sampleShape: [1, 28, 28], mean: 0.286, std: 0.353 };
  const train = await Dataset.fromIdx(file('train-images-idx3-ubyte.gz'), file('train-labels-idx1-ubyte.gz'), idxOptions);
  const test = await Dataset.fromIdx(file('t10k-images-idx3-ubyte.gz'), file('t10k-labels-idx1-ubyte.gz'), idxOptions);

  const model = nn.sequential(
    nn.conv2d(1, 32, 3, { padding: 1 }), nn.relu(), nn.maxPool2d(2),
    nn.conv2d(32, 64, 3, { padding: 1 }), nn.relu(), nn.maxPool2d(2),
    nn.flatten(), nn.linear(64 * 7 * 7, 128), nn.relu(), nn.dropout(0.25), nn.linear(128, 10),
  );
  const trainer = new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3 },
    config: { numEpochs, batchSize: 128, evalBatchSize: 1000, seed: 0 },
  });
  const info = runtimeInfo();
  console.log(`firebrand demo: Fashion-MNIST, ${train.length} training / ${test.length} test images, ` +
    `${trainer.parameterCount} parameters, libtorch ${info.torchVersion}, ${info.numThreads} threads, BLAS ${info.blas.vendor}`);

  // The test set is evaluated after every epoch; the last evaluation is the result.
  const history = await trainer.fit(train, { evalData: test });
  const last = history.epochs[history.epochs.length - 1];
  const loss = last.valLoss ?? NaN;
  const accuracy = last.valAccuracy ?? 0;
  const minutes = (Date.now() - started) / 60000;
  console.log(`test accuracy ${accuracy.toFixed(4)}  test loss ${loss.toFixed(4)}  total time ${minutes.toFixed(1)} min`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
