// Fine-tuning torchvision's ResNet-18 with its head swapped: the checkpoint is
// torchvision's own state dict (a torch.save .pth, or .safetensors), read as it
// is; model.fc is replaced by a 10-class layer (the file's 1000-class head is
// left out) and trains with the last stage, the rest frozen. Fashion-MNIST's
// gray images are repeated to the 3 channels the network takes.
//   npm run build:ts && node dist/examples/finetune-torchvision.js [resnet18.pth]
//   (TORCHVISION_WEIGHTS=<file> also names it; without one, torchvision's initialization stands in;
//    EXAMPLE_EPOCHS, default 2; EXAMPLE_TRAIN_SAMPLES, default 60000; apt-get install dataset-fashion-mnist)
// In your project, import from 'firebrand' instead of '../src'.
import { nn, ResNet, Tensor, torchvision, Trainer } from '../src';
import { exampleSize } from './shared/example-size';
import { fashionMnistImages } from './shared/fashion-mnist-images';

class GrayResNet extends nn.Module {
  backbone: ResNet;

  constructor(weights: string | undefined) {
    super();
    this.backbone = torchvision.models.resnet18({ weights });
    this.backbone.fc = nn.linear(512, 10);
  }

  /** images [batch, 1, 28, 28] -> logits [batch, 10]. */
  forward(images: Tensor): Tensor {
    return this.backbone.forward(images.expand(-1, 3, -1, -1));
  }
}

async function main(): Promise<void> {
  const weights = process.argv[2] ?? process.env.TORCHVISION_WEIGHTS;
  const epochs = exampleSize('EXAMPLE_EPOCHS', 2);
  const { train, test } = await fashionMnistImages(exampleSize('EXAMPLE_TRAIN_SAMPLES', 60000), 2000);
  console.log(weights === undefined ? "no weights given: torchvision's initialization" : `weights from ${weights}`);
  const trainer = new Trainer({
    model: new GrayResNet(weights),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3 },
    config: {
      numEpochs: epochs,
      batchSize: 64,
      logEvery: 50,
      freeze: ['backbone.conv1', 'backbone.bn1', 'backbone.layer1', 'backbone.layer2', 'backbone.layer3'],
    },
  });
  const history = await trainer.fit(train, { evalData: test });
  const last = history.epochs[history.epochs.length - 1];
  console.log(`test accuracy ${last.valAccuracy?.toFixed(4)} after ${epochs} epochs`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
