// IDX files (plain and gzip) read in C++ into tensors.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

import { Dataset, Model, nn, Trainer } from '../src';
import { expectClose } from './support/expect-close';
import { idxFile, rejectionOf } from './support/helpers';

describe('IDX datasets', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-idx-'));
  });
  after(() => fs.rmSync(dir, { recursive: true }));

  it('reads uint8 images (gzip) and labels (plain), scaled and reshaped', async () => {
    const pixels = Buffer.from(Array.from({ length: 3 * 2 * 2 }, (_, i) => i * 20));
    fs.writeFileSync(path.join(dir, 'images.gz'), zlib.gzipSync(idxFile(0x08, [3, 2, 2], pixels)));
    fs.writeFileSync(path.join(dir, 'labels'), idxFile(0x08, [3], Buffer.from([2, 0, 1])));
    const data = await Dataset.fromIdx(path.join(dir, 'images.gz'), path.join(dir, 'labels'), {
      sampleShape: [1, 2, 2],
    });
    expect(data.length).to.equal(3);
    expect(data.sampleShape).to.deep.equal([1, 2, 2]);
    expect(data.targetShape).to.deep.equal([]);
    const { input: inputs, target: targets } = data.fields();
    expect(inputs.shape).to.deep.equal([3, 1, 2, 2]);
    expect(inputs.data).to.be.instanceOf(Float32Array);
    Array.from(inputs.data as Float32Array).forEach((value, i) => expect(value).to.be.closeTo((i * 20) / 255, 1e-6));
    expect(Array.from(targets.data as Uint8Array)).to.deep.equal([2, 0, 1]);
    expect(Array.from(data.slice(1).fields().target.data as Uint8Array)).to.deep.equal([0, 1]);
  });

  it('saves its scaling and normalization with the model, which then takes raw pixels as training saw them', async () => {
    const count = 12;
    const pixels = Buffer.from(Array.from({ length: count * 36 }, (_, i) => (i * 37) % 256));
    fs.writeFileSync(path.join(dir, 'serve-images'), idxFile(0x08, [count, 6, 6], pixels));
    fs.writeFileSync(
      path.join(dir, 'serve-labels'),
      idxFile(0x08, [count], Buffer.from(Array.from({ length: count }, (_, i) => i % 2))),
    );
    const data = await Dataset.fromIdx(path.join(dir, 'serve-images'), path.join(dir, 'serve-labels'), {
      mean: 0.3,
      std: 0.2,
      sampleShape: [36],
    });
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(36, 8), nn.relu(), nn.linear(8, 2)),
      loss: 'cross_entropy',
      optimizer: { name: 'sgd', lr: 0.1 },
      config: { numEpochs: 1, batchSize: 4, progressBar: false, numThreads: 1 },
    });
    await trainer.fit(data);
    const folder = path.join(dir, 'served-idx-model');
    await trainer.save(folder);
    const model = await Model.load(folder);
    const raw = pixels.subarray(0, 3 * 36);
    const served = await model.predict(raw, [3, 6, 6]);
    const trained = data.slice(0, 3).fields().input; // what training read: (x / 255 - 0.3) / 0.2
    expectClose(served, await model.predict(trained.data, trained.shape), 'raw pixels', { tolerance: 1e-6 });
    // Floats are taken as transformed already: 0-255 ones are raw pixels the transforms never make.
    const unscaled = await rejectionOf(model.predict(Float32Array.from(raw), [3, 36]));
    expect(unscaled.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(unscaled.message).to.contain(
      "predict: the inputs hold values in [0.000, 255.0], but the model's saved image transforms make values in " +
        '[-1.500, 3.500]; they look like raw pixels: give pixels as a Uint8Array',
    );
    const png = fs.readFileSync(path.join(__dirname, '..', '..', 'test', 'fixtures', 'images', 'gray.png'));
    const error = await rejectionOf(model.predict(png));
    expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(error.message).to.contain(
      "[1,25,19] after the transforms hold 475 values, but the model's samples are [36]",
    );
  });

  it('reads big-endian int32 and float32 IDX values exactly', async () => {
    const floats = Buffer.alloc(4 * 4);
    [0.5, -1.25, 3, 100.125].forEach((value, i) => floats.writeFloatBE(value, 4 * i));
    const labels = Buffer.alloc(4 * 4);
    [1, 0, 1, 0].forEach((value, i) => labels.writeInt32BE(value, 4 * i));
    fs.writeFileSync(path.join(dir, 'inputs-f32-4'), idxFile(0x0d, [4, 1], floats));
    fs.writeFileSync(path.join(dir, 'labels-i32'), idxFile(0x0c, [4], labels));
    const data = await Dataset.fromIdx(path.join(dir, 'inputs-f32-4'), path.join(dir, 'labels-i32'));
    const { input: inputs, target: targets } = data.fields();
    expect(Array.from(inputs.data as Float32Array)).to.deep.equal([0.5, -1.25, 3, 100.125]);
    expect(inputs.shape).to.deep.equal([4, 1]);
    expect(targets.data).to.be.instanceOf(Int32Array);
    expect(Array.from(targets.data as Int32Array)).to.deep.equal([1, 0, 1, 0]);

    const normalized = await Dataset.fromIdx(path.join(dir, 'inputs-f32-4'), path.join(dir, 'labels-i32'), {
      mean: 1,
      std: 2,
    });
    expect(Array.from(normalized.fields().input.data as Float32Array)).to.deep.equal([-0.25, -1.125, 1, 49.5625]);
  });

  it('rejects a sampleShape that does not hold a sample', async () => {
    fs.writeFileSync(path.join(dir, 'small'), idxFile(0x08, [2, 3], Buffer.alloc(6)));
    fs.writeFileSync(path.join(dir, 'small-labels'), idxFile(0x08, [2], Buffer.alloc(2)));
    const error = await Dataset.fromIdx(path.join(dir, 'small'), path.join(dir, 'small-labels'), {
      sampleShape: [2, 2],
    }).then(
      () => undefined,
      (rejection: Error) => rejection,
    );
    expect(error?.message).to.contain('sampleShape [2, 2] holds 4 values but each sample of [2, 3] holds 3');
  });

  it('loads the Fashion-MNIST test set installed by dataset-fashion-mnist', async function () {
    const dataDir = process.env.FASHION_MNIST_DIR ?? '/usr/share/datasets/fashion-mnist';
    const images = path.join(dataDir, 't10k-images-idx3-ubyte.gz');
    if (!fs.existsSync(images)) {
      console.log(
        `      skipped: ${images} is missing (apt-get install dataset-fashion-mnist, or set FASHION_MNIST_DIR)`,
      );
      this.skip();
    }
    const data = await Dataset.fromIdx(images, path.join(dataDir, 't10k-labels-idx1-ubyte.gz'), {
      sampleShape: [1, 28, 28],
    });
    expect(data.length).to.equal(10000);
    expect(data.sampleShape).to.deep.equal([1, 28, 28]);
  });
});
