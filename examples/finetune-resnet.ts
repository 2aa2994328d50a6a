// Fine-tuning a ResNet-18 exported from PyTorch (torch.jit.script; random weights
// stand in for pretrained ones: scripts/make-example-models.py) on Fashion-MNIST
// with its backbone frozen: only the head trains, the backbone's BatchNorm stays
// in eval mode, and every backbone weight and buffer ends as it began. Then the
// last stage is unfrozen for one more epoch at a lower learning rate.
//   npm run build:ts && node dist/examples/finetune-resnet.js   (EXAMPLE_EPOCHS, default 3; EXAMPLE_TRAIN_SAMPLES, default 60000)
//   (apt-get install dataset-fashion-mnist)
// In your project, import from 'firebrand' instead of '../src'.
import path from 'node:path';

import { Callback, nn, Trainer } from '../src';
import { exampleSize } from './shared/example-size';
import { fashionMnistImages } from './shared/fashion-mnist-images';

async function main(): Promise<void> {
  const epochs = exampleSize('EXAMPLE_EPOCHS', 3);
  const trainSamples = exampleSize('EXAMPLE_TRAIN_SAMPLES', 60000);
  const { train, test } = await fashionMnistImages(trainSamples, 2000);

  // Lightning's BaseFinetuning: the last stage joins at the last epoch, as its own parameter group.
  const unfreezeLastStage: Callback = {
    async postEpoch(epoch, _logs, trainer) {
      if (epoch === epochs - 2)
        console.log(`unfrozen: ${(await trainer.unfreeze('layer4', { lr: 1e-4 })).length} parameters of layer4`);
    },
  };
  const trainer = new Trainer({
    model: nn.torchScript(path.join(__dirname, '..', '..', 'examples', 'data', 'resnet18-gray.pt')),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-2 },
    config: { numEpochs: epochs, batchSize: 64, logEvery: 50, freeze: ['conv1', 'bn1', 'layer*'] },
    callbacks: [unfreezeLastStage],
  });
  await trainer.setup();
  const before = await trainer.stateDict();
  const history = await trainer.fit(train, { evalData: test });
  const after = await trainer.stateDict();
  const backbone = Object.keys(before).filter((name) => /^(conv1|bn1|layer[123])\./.test(name));
  const unchanged = backbone.every((name) =>
    Buffer.from(before[name].data.buffer).equals(Buffer.from(after[name].data.buffer)),
  );
  console.log(`layers 1-3 and the stem (${backbone.length} parameters and buffers) unchanged: ${unchanged}`);
  console.log(
    `learning rates: ${trainer.learningRateNames.map((name, i) => `${name} ${trainer.learningRates[i]}`).join(', ')}`,
  );
  const last = history.epochs[history.epochs.length - 1];
  console.log(`test accuracy ${last.valAccuracy?.toFixed(4)}, ${history.samplesPerSecond.toFixed(0)} samples/s`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
