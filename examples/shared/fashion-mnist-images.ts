// Fashion-MNIST as [1, 28, 28] images (the channel axis a conv2d takes), normalised, read from
// Debian's dataset-fashion-mnist (or FASHION_MNIST_DIR): what the convolutional examples train on.
import path from 'node:path';

import { Dataset } from '../../src';

const dataDir = process.env.FASHION_MNIST_DIR ?? '/usr/share/datasets/fashion-mnist';
const file = (name: string) => path.join(dataDir, name);

export async function fashionMnistImages(
  trainSamples: number,
  testSamples: number,
): Promise<{ train: Dataset; test: Dataset }> {
  const images = { sampleShape: [1, 28, 28], mean: 0.286, std: 0.353 };
  const train = await Dataset.fromIdx(file('train-images-idx3-ubyte.gz'), file('train-labels-idx1-ubyte.gz'), images);
  const test = await Dataset.fromIdx(file('t10k-images-idx3-ubyte.gz'), file('t10k-labels-idx1-ubyte.gz'), images);
  return { train: train.slice(0, trainSamples), test: test.slice(0, testSamples) };
}
