// Module style: a ResNet-18 written as TypeScript modules (examples/models/resnet.ts,
// PyTorch's names and init), trained on Fashion-MNIST; its forward runs in C++.
//   npm run build:ts && node dist/examples/resnet-fashion-mnist.js   (EXAMPLE_EPOCHS, default 3; EXAMPLE_TRAIN_SAMPLES, default 60000)
//   (apt-get install dataset-fashion-mnist)
// In your project, import from 'firebrand' instead of '../src'.
import { Trainer } from '../src';
import { exampleSize } from './shared/example-size';
import { ResNet18 } from './models/resnet';
import { fashionMnistImages } from './shared/fashion-mnist-images';

async function main(): Promise<void> {
  const epochs = exampleSize('EXAMPLE_EPOCHS', 3);
  const trainSamples = exampleSize('EXAMPLE_TRAIN_SAMPLES', 60000);
  const { train, test } = await fashionMnistImages(trainSamples, Math.min(10000, trainSamples));

  const model = new ResNet18({ inChannels: 1, width: 16, numClasses: 10 });
  console.log(model.summary([1, 1, 28, 28]).split('\n').slice(-6).join('\n'));
  const trainer = new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 2e-3, weightDecay: 0.05 },
    lrScheduler: { name: 'cosine', warmupSteps: 20 },
    config: { numEpochs: epochs, batchSize: 64, logEvery: 50 },
  });
  const history = await trainer.fit(train, { evalData: test });
  const last = history.epochs[history.epochs.length - 1];
  console.log(`test accuracy ${last.valAccuracy?.toFixed(4)}, ${history.samplesPerSecond.toFixed(0)} samples/s`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
