// Image datasets end to end: ImageFolder's classes and sample order (against
// torchvision's ImageFolder on the same tree), batches decoded and transformed
// on the loader's workers and replayed by seed, broken files stopped or
// skipped, the errors a user meets, and the evaluation transforms saved with
// the model so that Model.load(dir).predict takes encoded image bytes.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  Dataset,
  decodeImage,
  imageTransforms as T,
  Model,
  nn,
  saveSafetensors,
  Trainer,
  type ImageTransformSpec,
} from '../src';
import { expectClose } from './support/expect-close';
import { rejectionOf } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'images');
const imageFolder = path.join(fixtures, 'folder');
const golden = JSON.parse(fs.readFileSync(path.join(fixtures, 'images.golden.json'), 'utf8')) as {
  imageFolder: { classes: string[]; samples: [string, number][] };
};

const evalTransforms: ImageTransformSpec[] = [
  T.resize(20),
  T.centerCrop(16),
  T.toDtype('float32', { scale: true }),
  T.normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
];
const trainTransforms: ImageTransformSpec[] = [
  T.randomResizedCrop(16, { scale: [0.5, 1] }),
  T.randomHorizontalFlip(),
  T.colorJitter({ brightness: 0.2, contrast: 0.2 }),
  T.toDtype('float32', { scale: true }),
  T.normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
];

function cnnTrainer(): Trainer {
  return new Trainer({
    model: nn.sequential(nn.conv2d(3, 6, 3), nn.relu(), nn.adaptiveAvgPool2d(1), nn.flatten(), nn.linear(6, 3)),
    loss: 'cross_entropy',
    optimizer: { name: 'sgd', lr: 0.05 },
    config: { numEpochs: 2, batchSize: 3, progressBar: false, numThreads: 1, seed: 3 },
  });
}

/** The temporary roots folderOf made, removed after the suite. */
const copies: string[] = [];

/** A copy of the fixture folder (or of chosen files) under a temporary root. */
function folderOf(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-images-'));
  copies.push(root);
  for (const [name, source] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.copyFileSync(path.join(fixtures, source), path.join(root, name));
  }
  return root;
}

async function batchesOf(data: Dataset, options: object): Promise<Record<string, unknown>[]> {
  const batches: Record<string, unknown>[] = [];
  for await (const batch of data.batches({ batchSize: 3, shuffle: true, seed: 11, epoch: 1, ...options })) {
    batches.push(batch);
  }
  return batches;
}

describe('image datasets', function () {
  after(() => {
    for (const root of copies.splice(0)) fs.rmSync(root, { recursive: true, force: true });
  });
  it("fromImageFolder finds the classes and samples torchvision's ImageFolder finds, in its order", async () => {
    const data = await Dataset.fromImageFolder(imageFolder, { transforms: evalTransforms });
    expect(data.classes).to.deep.equal(golden.imageFolder.classes);
    expect(data.samples.map((sample) => [path.relative(imageFolder, sample.path), sample.label])).to.deep.equal(
      golden.imageFolder.samples,
    );
    expect(data.length).to.equal(8);
    expect(data.fieldShapes).to.deep.equal({ input: [3, 16, 16], target: [] });
    // From the read mode and the transforms, decoding nothing: -1 where only the files would tell.
    expect((await Dataset.fromImageFolder(imageFolder)).fieldShapes.input).to.deep.equal([3, -1, -1]);
    const gray = await Dataset.fromImageFolder(imageFolder, { mode: 'GRAY', transforms: [T.resize([8, 9]), T.rgb()] });
    expect(gray.sampleShape).to.deep.equal([3, 8, 9]);
  });

  it('batches are decoded and transformed by seed: the same with 0 or 2 workers, and a resumed epoch replays its batches', async () => {
    const data = await Dataset.fromImageFolder(imageFolder, { transforms: trainTransforms });
    const inline = await batchesOf(data, { numWorkers: 0 });
    const threaded = await batchesOf(data, { numWorkers: 2 });
    expect(threaded).to.deep.equal(inline);
    expect(inline.map((batch) => (batch.input as { shape: number[] }).shape)).to.deep.equal([
      [3, 3, 16, 16],
      [3, 3, 16, 16],
      [2, 3, 16, 16],
    ]);
    const resumed = await batchesOf(data, { startBatch: 1 });
    expect(resumed).to.deep.equal(inline.slice(1));
    const otherEpoch = await batchesOf(data, { epoch: 2 });
    expect(otherEpoch[0].input).not.to.deep.equal(inline[0].input);
  });

  it('a batch is the images decoded and transformed by hand, stacked', async () => {
    const data = await Dataset.fromImageFolder(imageFolder, { transforms: evalTransforms });
    const [batch] = await batchesOf(data, { shuffle: false, batchSize: 8 });
    const input = batch.input as { data: Float32Array; shape: number[] };
    for (const [i, sample] of data.samples.entries()) {
      const image = await decodeImage(fs.readFileSync(sample.path), { transforms: evalTransforms });
      const size = image.data.length;
      expect(Array.from(input.data.subarray(i * size, (i + 1) * size)), sample.path).to.deep.equal(
        Array.from(image.data as Float32Array),
      );
    }
  });

  it('trains a CNN on an image folder, saves the evaluation transforms, and the loaded model predicts on encoded bytes', async () => {
    const data = await Dataset.fromImageFolder(imageFolder);
    const [trainPart, validationPart] = data.split({ validation: 0.25, seed: 1 });
    const train = trainPart.withImageTransforms(...trainTransforms);
    const validation = validationPart.withImageTransforms(...evalTransforms);
    const trainer = cnnTrainer();
    const history = await trainer.fit(train, { evalData: validation });
    expect(history.epochs).to.have.length(2);
    expect(Number.isFinite(history.epochs[1].loss)).to.equal(true);
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-image-model-'));
    await trainer.save(folder);
    const saved = JSON.parse(fs.readFileSync(path.join(folder, 'preprocessing.json'), 'utf8'));
    expect(saved.images.mode).to.equal('RGB');
    expect(saved.images.classes).to.deep.equal(golden.imageFolder.classes);
    expect(saved.images.transforms.map((spec: ImageTransformSpec) => spec.name)).to.deep.equal([
      'resize',
      'centerCrop',
      'toDtype',
      'normalize',
    ]);
    // The evaluation transforms end at one size, which is saved: exportOnnx needs no example.
    expect(saved.images.sampleShape).to.deep.equal([3, 16, 16]);
    await trainer.exportOnnx(path.join(folder, 'model.onnx'));
    expect(fs.statSync(path.join(folder, 'model.onnx')).size).to.be.above(0);
    const model = await Model.load(folder);
    // Floats are taken as transformed: another size than the saved one is refused, naming both.
    const wrongSize = await rejectionOf(model.predict(new Float32Array(3 * 20 * 20), [1, 3, 20, 20]));
    expect(wrongSize.message).to.equal(
      'predict: the model takes images [3,16,16] (its evaluation transforms end at that size), got samples [3,20,20]; ' +
        'give encoded images, or uint8 pixels with their shape, for predict to transform',
    );
    const files = ['rgb.jpg', 'palette.png', 'rgba.webp'].map((file) => fs.readFileSync(path.join(fixtures, file)));
    // The same images decoded and transformed by hand, as floats (taken as they are).
    const byHand = await Promise.all(files.map((bytes) => decodeImage(bytes, { transforms: evalTransforms })));
    const inputs = new Float32Array(byHand.flatMap((image) => Array.from(image.data as Float32Array)));
    const expected = await model.predict(inputs, [3, 3, 16, 16]);
    const served = await model.predict(files);
    expect(served.shape).to.deep.equal([3, 3]);
    // The same inputs; a BLAS kernel may round the last bit otherwise for another buffer's alignment.
    expectClose(served, expected, 'served on encoded images', { tolerance: 1e-6 });
    const one = await model.predict(files[1]);
    expectClose(one.data, expected.data.slice(3, 6), 'one image', { tolerance: 1e-6 });
    // One native call decodes the batch; a file it cannot decode is named by its place in it.
    const broken = await rejectionOf(model.predict([files[0], Buffer.from('not an image')]));
    expect(broken.message).to.match(/^images\[1\]: /);
  });

  it('without evaluation images, the served model says its saved transforms are random', async () => {
    const data = await Dataset.fromImageFolder(imageFolder, { transforms: trainTransforms });
    const trainer = cnnTrainer();
    await trainer.fit(data);
    const error = await rejectionOf(trainer.predict(fs.readFileSync(path.join(fixtures, 'rgb.jpg'))));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_STATE');
    expect(error.message).to.match(/random ones \(randomResizedCrop, randomHorizontalFlip, colorJitter\).*evalData/);
  });

  it("a broken file stops the epoch naming it, or with onError 'skip' is left out and listed", async () => {
    const root = folderOf({
      'a/1.jpg': 'rgb.jpg',
      'a/2.jpg': 'truncated.jpg',
      'b/3.png': 'rgb.png',
      'b/4.png': 'gray.png',
    });
    const stopping = await Dataset.fromImageFolder(root, { transforms: evalTransforms });
    const error = await rejectionOf(cnnTrainer().fit(stopping));
    expect(error.code).to.equal('ERR_FIREBRAND_FILE');
    expect(error.message)
      .to.contain(path.join(root, 'a', '2.jpg'))
      .and.to.match(/corrupt or truncated/);
    const skipping = await Dataset.fromImageFolder(root, { transforms: evalTransforms, onError: 'skip' });
    const batches = await batchesOf(skipping, { shuffle: false, batchSize: 4 });
    expect((batches[0].input as { shape: number[] }).shape).to.deep.equal([3, 3, 16, 16]);
    expect(Array.from((batches[0].target as { data: BigInt64Array }).data, Number)).to.deep.equal([0, 1, 1]);
    expect(skipping.skippedImages()).to.have.length(1);
    expect(skipping.skippedImages()[0].path).to.equal(path.join(root, 'a', '2.jpg'));
    await cnnTrainer().fit(skipping);
  });

  it('errors name the class folder, the files of different sizes, the image mode against the model, and the CSV column', async () => {
    const root = folderOf({ 'a/1.jpg': 'rgb.jpg', 'b/notes.jpg.txt': 'rgb.jpg' });
    let error = await rejectionOf(Dataset.fromImageFolder(root));
    expect(error.code).to.equal('ERR_FIREBRAND_DATA');
    expect(error.message).to.contain(`class folder ${path.join(root, 'b')} (1 files of other kinds) holds no image`);
    expect((await Dataset.fromImageFolder(root, { allowEmpty: true })).length).to.equal(1);

    const mixed = await Dataset.fromImageFolder(imageFolder, { transforms: [T.toDtype('float32', { scale: true })] });
    error = await rejectionOf(cnnTrainer().fit(mixed));
    expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(error.message).to.match(
      /after the transforms; a batch needs one size: end the transforms with resize and centerCrop/,
    );

    const gray = Dataset.fromImageFiles(
      ['rgb.jpg', 'gray.png', 'rgb.png'].map((file, i) => ({ path: path.join(fixtures, file), label: i })),
      { mode: 'GRAY', transforms: [T.resize([16, 16]), T.toDtype('float32', { scale: true })] },
    );
    error = await rejectionOf(cnnTrainer().fit(gray));
    expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(error.message).to.match(
      /with C=3 \(inChannels=3\).*the samples are images decoded as GRAY.*imageTransforms.rgb\(\)/,
    );

    const csv = path.join(folderOf({}), 'labels.csv');
    fs.writeFileSync(csv, `file,label\n${path.join(fixtures, 'rgb.jpg')},cat\n`);
    error = await rejectionOf(Dataset.fromImageCsv(csv, { pathColumn: 'path' }));
    expect(error.message).to.contain("no column 'path'; the columns are file, label");
  });

  it('fromImageCsv reads paths relative to the CSV and labels by name; fromImageFiles takes a list', async () => {
    const root = folderOf({ 'img/x.jpg': 'rgb.jpg', 'img/y.png': 'rgb.png', 'img/z.webp': 'lossless.webp' });
    fs.writeFileSync(
      path.join(root, 'labels.csv'),
      'path,label\r\nimg/x.jpg,dog\r\nimg/y.png,cat\r\nimg/z.webp,dog\r\n',
    );
    const data = await Dataset.fromImageCsv(path.join(root, 'labels.csv'), { transforms: evalTransforms });
    expect(data.classes).to.deep.equal(['cat', 'dog']);
    expect(data.samples.map((sample) => [path.relative(root, sample.path), sample.label])).to.deep.equal([
      ['img/x.jpg', 1],
      ['img/y.png', 0],
      ['img/z.webp', 1],
    ]);
    const files = Dataset.fromImageFiles(data.samples, { transforms: evalTransforms });
    expect(await batchesOf(files, { shuffle: false })).to.deep.equal(await batchesOf(data, { shuffle: false }));
  });

  it('labels an evaluation folder missing a class by class name, as the training folder does', async () => {
    // Training: Zebra, cat, dog (indices 0, 1, 2). Validation: cat and dog only, which ImageFolder alone
    // would index 0 and 1. A model that always says 'dog' is right on exactly the dog files.
    const train = (await Dataset.fromImageFolder(imageFolder)).withImageTransforms(...evalTransforms);
    const root = folderOf({ 'cat/a.jpg': 'rgb.jpg', 'cat/b.png': 'rgb.png', 'dog/c.png': 'palette.png' });
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-always-dog-'));
    try {
      const validation = (await Dataset.fromImageFolder(root)).withImageTransforms(...evalTransforms);
      expect(validation.classes).to.deep.equal(['cat', 'dog']);
      const alwaysDog = new Trainer({
        model: nn.sequential(nn.flatten(), nn.linear(3 * 16 * 16, 3)),
        loss: 'cross_entropy',
        optimizer: { name: 'sgd', lr: 0 },
        config: { numEpochs: 1, batchSize: 4, progressBar: false, numThreads: 1 },
      });
      const weights = path.join(folder, 'always-dog.safetensors');
      await saveSafetensors(weights, {
        '1.weight': { data: new Float32Array(3 * 768), shape: [3, 768] },
        '1.bias': { data: Float32Array.from([0, 0, 1]), shape: [3] },
      });
      await alwaysDog.initWeightsFrom(weights);
      const history = await alwaysDog.fit(train, { evalData: validation });
      expect(history.epochs[0].valAccuracy).to.be.closeTo(1 / 3, 1e-9);
      expect((await alwaysDog.evaluate(validation)).accuracy).to.be.closeTo(1 / 3, 1e-9);
      // The dataset itself, relabelled by name.
      expect(validation.withClasses(train.classes as string[]).samples.map((sample) => sample.label)).to.deep.equal([
        1, 1, 2,
      ]);
      // A class the model never saw is refused, naming it and a file of it.
      const horses = (
        await Dataset.fromImageFolder(folderOf({ 'horse/h.png': 'rgb.png', 'dog/d.png': 'rgb.png' }))
      ).withImageTransforms(...evalTransforms);
      const error = await rejectionOf(alwaysDog.fit(train, { evalData: horses }));
      expect(error.code).to.equal('ERR_FIREBRAND_DATA');
      expect(error.message).to.match(
        /^fit: evalData: class 'horse' \(\S*horse\/h\.png, and any other of its files\) is none of the classes the model knows \(Zebra, cat, dog\)/,
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('splits images by a group of each file, keeping twins of one object in one part', async () => {
    // Twelve files, three photos each of four objects: a plain split would put some object's photos on both sides.
    const files: Record<string, string> = {};
    for (const object of ['ant', 'bee', 'cow', 'elk']) {
      for (const take of [1, 2, 3])
        files[`${object === 'cow' || object === 'elk' ? 'big' : 'small'}/${object}_${take}.png`] = 'rgb.png';
    }
    const root = folderOf(files);
    try {
      const data = await Dataset.fromImageFolder(root);
      const objectOf = ({ path: file }: { path: string }) => path.basename(file).split('_')[0];
      const { train, validation } = data.split({ validation: 0.25, seed: 3, groups: objectOf });
      const trainObjects = new Set(train.samples.map(objectOf));
      const validationObjects = new Set(validation.samples.map(objectOf));
      expect(train.length + validation.length).to.equal(12);
      expect(validation.length).to.equal(3);
      expect([...validationObjects].filter((object) => trainObjects.has(object))).to.deep.equal([]);
      const arrays = Dataset.fromArrays({
        inputs: new Float32Array(8),
        inputShape: [4, 2],
        targets: new Int32Array(4),
      });
      expect(() => arrays.split({ validation: 0.5, groups: () => 1 })).to.throw('takes each image file');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
