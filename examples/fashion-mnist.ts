// Functional style: an MLP on Fashion-MNIST, evaluated every epoch, saved for inference.
//   npm run build:ts && node dist/examples/fashion-mnist.js   (apt-get install dataset-fashion-mnist; EXAMPLE_EPOCHS, default 3)
// In your project, import from 'firebrand' instead of '../src'.
import path from 'node:path';

import { Dataset, Model, nn, Trainer } from '../src';
import { exampleSize } from './shared/example-size';

const dataDir = process.env.FASHION_MNIST_DIR ?? '/usr/share/datasets/fashion-mnist';
const file = (name: string) => path.join(dataDir, name);

async function main(): Promise<void> {
  const epochs = exampleSize('EXAMPLE_EPOCHS', 3);
  // Scaled to [0, 1] and normalized as the files are read; the saved model does the same to raw pixels.
  const pixels = { mean: 0.286, std: 0.353 };
  const train = await Dataset.fromIdx(file('train-images-idx3-ubyte.gz'), file('train-labels-idx1-ubyte.gz'), pixels);
  const test = await Dataset.fromIdx(file('t10k-images-idx3-ubyte.gz'), file('t10k-labels-idx1-ubyte.gz'), pixels);

  const trainer = new Trainer({
    model: nn.sequential(nn.flatten(), nn.linear(784, 256), nn.relu(), nn.dropout(0.1), nn.linear(256, 10)),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3, weightDecay: 1e-4 },
    lrScheduler: { name: 'cosine', warmupSteps: 100 },
    config: { numEpochs: epochs, batchSize: 128, metrics: ['f1Macro'], logEvery: 100 },
  });
  const history = await trainer.fit(train, { evalData: test });
  const last = history.epochs[history.epochs.length - 1];
  console.log(
    `test accuracy ${last.valAccuracy?.toFixed(4)}, macro F1 ${last.valF1Macro?.toFixed(4)}, ${history.samplesPerSecond.toFixed(0)} samples/s`,
  );

  const folder = path.join(process.env.TMPDIR ?? '/tmp', 'fashion-mnist-mlp');
  await trainer.save(folder);
  const model = await Model.load(folder);
  const first = test.slice(0, 1).fields().input;
  const scores = await model.predict(first.data, first.shape);
  console.log(`saved to ${folder}; first test image -> class ${scores.data.indexOf(Math.max(...scores.data))}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
