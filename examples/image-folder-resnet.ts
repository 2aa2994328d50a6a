// Fine-tuning torchvision's ResNet-18 on a folder of images, a subfolder per
// class (torchvision's ImageFolder layout), then serving the saved model on
// encoded image files. The images are decoded (JPEG, PNG, WebP) and
// transformed (torchvision.transforms.v2's RandomResizedCrop, flips, jitter,
// normalization) in C++ on the loader's worker threads; gray images become the
// 3 channels the network takes as they are decoded. The evaluation transforms
// are saved with the model, so the service hands it the bytes of an upload.
//   npm run build:ts && node dist/examples/image-folder-resnet.js [folder] [resnet18.pth]
//   (folder: <folder>/train/<class>/* and <folder>/val/<class>/*; without one, Fashion-MNIST
//    (apt-get install dataset-fashion-mnist) is written out as such a folder of PNGs first.
//    TORCHVISION_WEIGHTS=<file> also names the weights; without, torchvision's initialization stands in.
//    EXAMPLE_EPOCHS, default 2; EXAMPLE_TRAIN_SAMPLES, the Fashion-MNIST images written for training, default 3000)
// In your project, import from 'firebrand' instead of '../src'.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, imageTransforms as T, Model, nn, torchvision, Trainer, writeImage } from '../src';
import { exampleSize } from './shared/example-size';

const FASHION = ['t-shirt', 'trouser', 'pullover', 'dress', 'coat', 'sandal', 'shirt', 'sneaker', 'bag', 'boot'];
const imagenet = T.normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]);

/** Fashion-MNIST's first images of each class as PNG files in <root>/{train,val}/<class>/. */
async function writeFashionMnistFolder(root: string, perClass: number): Promise<void> {
  const dataDir = process.env.FASHION_MNIST_DIR ?? '/usr/share/datasets/fashion-mnist';
  const raw = await Dataset.fromIdx(
    path.join(dataDir, 't10k-images-idx3-ubyte.gz'),
    path.join(dataDir, 't10k-labels-idx1-ubyte.gz'),
    { scaleBytes: false },
  );
  const { input, target } = raw.fields();
  const written = new Array(FASHION.length).fill(0);
  for (let i = 0; i < raw.length && Math.min(...written) < perClass + perClass / 4; i++) {
    const label = Number(target.data[i]);
    if (written[label] >= perClass + perClass / 4) continue;
    const part = written[label] < perClass ? 'train' : 'val';
    const folder = path.join(root, part, FASHION[label]);
    fs.mkdirSync(folder, { recursive: true });
    const pixels = input.data.slice(i * 784, (i + 1) * 784);
    await writeImage(path.join(folder, `${i}.png`), { data: pixels, shape: [1, 28, 28] });
    written[label] += 1;
  }
}

async function main(): Promise<void> {
  let root = process.argv[2];
  const weights = process.argv[3] ?? process.env.TORCHVISION_WEIGHTS;
  if (root === undefined) {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fashion-mnist-folder-'));
    await writeFashionMnistFolder(root, Math.ceil(exampleSize('EXAMPLE_TRAIN_SAMPLES', 3000) / FASHION.length));
    console.log(`wrote Fashion-MNIST as an image folder in ${root}`);
  }
  const train = await Dataset.fromImageFolder(path.join(root, 'train'), {
    transforms: [
      T.randomResizedCrop(56, { scale: [0.6, 1] }),
      T.randomHorizontalFlip(),
      T.colorJitter({ brightness: 0.2, contrast: 0.2 }),
      T.toDtype('float32', { scale: true }),
      imagenet,
    ],
  });
  const val = await Dataset.fromImageFolder(path.join(root, 'val'), {
    transforms: [T.resize(64), T.centerCrop(56), T.toDtype('float32', { scale: true }), imagenet],
  });
  const classes = train.classes as string[];
  console.log(`${train.length} training and ${val.length} validation images of ${classes.length} classes`);

  const resnet = torchvision.models.resnet18({ weights });
  resnet.fc = nn.linear(512, classes.length);
  console.log(weights === undefined ? "no weights given: torchvision's initialization" : `weights from ${weights}`);
  const trainer = new Trainer({
    model: resnet,
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3 },
    config: { numEpochs: exampleSize('EXAMPLE_EPOCHS', 2), batchSize: 32, logEvery: 20 },
  });
  const history = await trainer.fit(train, { evalData: val });
  const last = history.epochs[history.epochs.length - 1];
  console.log(`validation accuracy ${last.valAccuracy?.toFixed(4)}`);

  // Served: the saved model decodes and transforms an upload's bytes as the validation images were.
  const folder = path.join(os.tmpdir(), 'image-folder-resnet');
  await trainer.save(folder);
  const model = await Model.load(folder);
  const upload = val.samples[0];
  const scores = await model.predict(fs.readFileSync(upload.path));
  const best = scores.data.indexOf(Math.max(...(scores.data as Float32Array)));
  console.log(`${path.basename(upload.path)} (a ${classes[upload.label]}) -> ${classes[best]}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
