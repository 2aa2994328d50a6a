// Image loading: firebrand's image datasets against torchvision's ImageFolder + DataLoader with the same
// number of workers, on the same files, on the same machine: images/s for decode + RandomResizedCrop +
// RandomHorizontalFlip + ToDtype + Normalize, on ImageNet-like photos (500x375 JPEGs, crops of 224) and on
// CIFAR-like 32x32 PNGs (crops of 32). torchvision is measured with ImageFolder's PIL loader (its default)
// and with torchvision.io.decode_image. Each side runs BENCH_ROUNDS times in turn; the median ratio is
// reported; both sides are timed on their second epoch (files cached, workers started). Then whether the
// loader or the step bounds training a ResNet-18 on the photos: the loader
// alone, the training step alone (on batches already in memory), and fit from the folder.
// Run where python3-torchvision is (the sid chroot):
//   npm run bench:images   (BENCH_WORKERS 2, BENCH_BATCH 32, BENCH_PHOTOS_PER_CLASS 40,
//                           BENCH_TINY_PER_CLASS 500, BENCH_ROUNDS 3, BENCH_FIT_STEPS 4 size it)
import { lastJsonOf, median } from './measures';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, imageTransforms as T, torchvision, Trainer } from '../../src';

const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const BATCH = Number(process.env.BENCH_BATCH ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FIT_STEPS = Number(process.env.BENCH_FIT_STEPS ?? 4);
const PYTHON = process.env.BENCH_PYTHON ?? 'python3';
const script = path.join(__dirname, '..', '..', '..', 'scripts', 'bench', 'image_loader.py');

function python(...args: string[]): { images: number; seconds: number } {
  return lastJsonOf(PYTHON, [script, ...args]);
}

function trainingTransforms(size: number) {
  return [
    T.randomResizedCrop(size),
    T.randomHorizontalFlip(),
    T.toDtype('float32', { scale: true }),
    T.normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
  ];
}

/** The second of two epochs, as torchvision's side is timed (the files in the page cache, workers running). */
async function firebrandImagesPerSecond(root: string, size: number): Promise<number> {
  const data = await Dataset.fromImageFolder(root, { transforms: trainingTransforms(size) });
  await data.batches({ batchSize: BATCH, numWorkers: WORKERS, shuffle: true, epoch: 0 }).drain();
  const drained = await data.batches({ batchSize: BATCH, numWorkers: WORKERS, shuffle: true, epoch: 1 }).drain();
  return drained.samples / drained.seconds;
}

async function compare(name: string, root: string, size: number): Promise<number> {
  const rows: number[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const ours = await firebrandImagesPerSecond(root, size);
    const [pil, tensors] = ['pil', 'decode_image'].map((loader) => {
      const measured = python('load', root, String(size), String(WORKERS), String(BATCH), '2', loader);
      return measured.images / measured.seconds;
    });
    rows.push([ours, pil, tensors]);
  }
  const column = (i: number) => rows.map((row) => row[i].toFixed(0)).join(', ');
  const ratio = (i: number) => median(rows.map((row) => row[0] / row[i]));
  console.log(`${name}, ${WORKERS} workers, batches of ${BATCH}: images/s in ${ROUNDS} rounds`);
  console.log(`  firebrand                                   ${column(0)}`);
  console.log(`  torchvision ImageFolder (PIL) + DataLoader  ${column(1)}   firebrand ${ratio(1).toFixed(2)}x`);
  console.log(`  torchvision ImageFolder (decode_image)      ${column(2)}   firebrand ${ratio(2).toFixed(2)}x`);
  return median(rows.map((row) => row[0]));
}

/** Images/s of ResNet-18 training steps on batches already in memory, and of fit from the folder. */
async function resnetBottleneck(root: string, loaderSpeed: number): Promise<void> {
  const steps = FIT_STEPS;
  const trainer = () =>
    new Trainer({
      model: torchvision.models.resnet18({ numClasses: 10 }),
      loss: 'cross_entropy',
      optimizer: { name: 'sgd', lr: 0.01, momentum: 0.9 },
      config: { numEpochs: 1, batchSize: BATCH, progressBar: false, logEvery: 1000, maxSteps: steps },
    });
  const count = BATCH * steps;
  const inMemory = Dataset.fromArrays({
    inputs: Float32Array.from({ length: count * 3 * 224 * 224 }, (_, i) => Math.sin(i)),
    inputShape: [count, 3, 224, 224],
    targets: Int32Array.from({ length: count }, (_, i) => i % 10),
  });
  const stepOnly = await trainer().fit(inMemory);
  const fromFolder = await trainer().fit(
    await Dataset.fromImageFolder(root, { transforms: trainingTransforms(224) }),
    {},
  );
  const stepSpeed = stepOnly.samplesPerSecond;
  const fitSpeed = fromFolder.samplesPerSecond;
  console.log(`ResNet-18, 224x224, batches of ${BATCH}, ${steps} steps: images/s`);
  console.log(`  loader alone (${WORKERS} workers)         ${loaderSpeed.toFixed(0)}`);
  console.log(`  training step alone (batches in memory) ${stepSpeed.toFixed(1)}`);
  console.log(`  fit from the image folder               ${fitSpeed.toFixed(1)}`);
  console.log(
    `  bottleneck: ${stepSpeed < loaderSpeed ? 'the step' : 'the loader'} (fit runs at ${((100 * fitSpeed) / stepSpeed).toFixed(0)}% of the step alone)`,
  );
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bench-images-'));
  try {
    const photos = path.join(root, 'photos');
    const tiny = path.join(root, 'tiny');
    python('make', photos, 'photos', process.env.BENCH_PHOTOS_PER_CLASS ?? '40');
    python('make', tiny, 'tiny', process.env.BENCH_TINY_PER_CLASS ?? '500');
    const photoSpeed = await compare('photos (500x375 JPEG) -> RandomResizedCrop(224)', photos, 224);
    await compare('CIFAR-like (32x32 PNG) -> RandomResizedCrop(32)', tiny, 32);
    await resnetBottleneck(photos, photoSpeed);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
