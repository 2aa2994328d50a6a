// Serving predictions: overlapping predict calls on a loaded Model or a
// trainer queue in call order; during fit they run between two optimizer
// steps and leave the training run bit for bit as it is without them.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Model, nn, TensorData, Trainer } from '../src';
import { blobDataset, blobTrainer, makeBlobs, rejectionOf } from './support/helpers';

const probe = makeBlobs(8).inputs;

function values(output: TensorData): number[] {
  return Array.from(output.data);
}

/** Dropout, BatchNorm and shuffling: everything a stray prediction could disturb. */
function noisyTrainer(): Trainer {
  return new Trainer({
    model: nn.sequential(nn.linear(4, 32), nn.batchNorm1d(32), nn.relu(), nn.dropout(0.3), nn.linear(32, 2)),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-2 },
    config: { numEpochs: 3, batchSize: 8, progressBar: false, numThreads: 1, seed: 7 },
  });
}

describe('serving predictions', () => {
  it('a loaded Model answers overlapping predict calls, in call order, as sequential calls do', async () => {
    const trainer = blobTrainer({ numEpochs: 1 });
    await trainer.fit(blobDataset(64));
    const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-serve-')), 'model');
    await trainer.save(folder);
    const model = await Model.load(folder);
    const inputs = Array.from({ length: 6 }, (_, i) => probe.map((value) => value * (i + 1)));
    const sequential: number[][] = [];
    for (const input of inputs) sequential.push(values(await model.predict(input, [8, 4])));
    const finished: number[] = [];
    const overlapping = await Promise.all(
      inputs.map((input, i) =>
        model.predict(input, [8, 4], { batchSize: 3 }).then((output) => {
          finished.push(i);
          return values(output);
        }),
      ),
    );
    expect(overlapping).to.deep.equal(sequential);
    expect(finished).to.deep.equal([0, 1, 2, 3, 4, 5]);
    fs.rmSync(path.dirname(folder), { recursive: true });
  });

  it('a trainer that is not fitting answers overlapping predict calls too, in call order', async () => {
    const trainer = blobTrainer({ numEpochs: 1 });
    await trainer.fit(blobDataset(64));
    const sequential = [
      values(await trainer.predict(probe, [8, 4])),
      values(
        await trainer.predict(
          probe.map((x) => -x),
          [8, 4],
        ),
      ),
    ];
    const finished: number[] = [];
    const overlapping = await Promise.all(
      [probe, probe.map((x) => -x)].map((input, i) =>
        trainer.predict(input, [8, 4]).then((output) => {
          finished.push(i);
          return values(output);
        }),
      ),
    );
    expect(overlapping).to.deep.equal(sequential);
    expect(finished).to.deep.equal([0, 1]);
  });

  it('bad input to an async API rejects its promise, never throws', async () => {
    const trainer = blobTrainer();
    await trainer.setup();
    let returned: Promise<unknown> | undefined;
    expect(() => {
      returned = trainer.predict(new Float32Array(3), [1, 4]);
    }).to.not.throw();
    expect((await rejectionOf(returned as Promise<unknown>)).code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-serve-')), 'model');
    await trainer.save(folder);
    const model = await Model.load(folder);
    expect(() => {
      returned = model.predict(new Float32Array(3), [1, 4]);
    }).to.not.throw();
    expect((await rejectionOf(returned as Promise<unknown>)).code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(() => {
      returned = model.predict('not an array' as unknown as Float32Array, [1, 4]);
    }).to.not.throw();
    expect((await rejectionOf(returned as Promise<unknown>)).code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    fs.rmSync(path.dirname(folder), { recursive: true });
  });

  it('a trainer serves predictions during fit from its current weights, and trains to the same bits', async () => {
    const data = blobDataset(512);
    const quiet = noisyTrainer();
    await quiet.fit(data);
    const expected = await quiet.stateDict();

    const serving = noisyTrainer();
    const fit = serving.fit(data);
    let fitDone = false;
    void fit.then(() => {
      fitDone = true;
    });
    const duringFit: number[][] = [];
    while (!fitDone) {
      const output = await serving.predict(probe, [8, 4]);
      if (!fitDone) duringFit.push(values(output));
    }
    const history = await fit;
    expect(history.epochs).to.have.length(3);
    // Served while training ran, from weights that kept changing.
    expect(duringFit.length).to.be.at.least(3);
    expect(new Set(duringFit.map((output) => output.join(','))).size).to.be.at.least(2);
    const actual = await serving.stateDict();
    expect(Object.keys(actual)).to.deep.equal(Object.keys(expected));
    for (const name of Object.keys(expected)) {
      expect(Array.from(actual[name].data as Float32Array), name).to.deep.equal(
        Array.from(expected[name].data as Float32Array),
      );
    }
    // Eval mode for the served calls only: the same prediction as after fit from the same weights.
    expect(values(await serving.predict(probe, [8, 4]))).to.deep.equal(values(await quiet.predict(probe, [8, 4])));
  });

  it('knows the model before setup when it is given as options.model', () => {
    const trainer = new Trainer({
      model: nn.sequential(nn.conv2d(1, 8, 3), nn.batchNorm2d(8), nn.flatten(), nn.linear(8 * 26 * 26, 10)),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { progressBar: false },
    });
    expect(trainer.parameterCount).to.equal(8 * 9 + 8 + 8 + 8 + 8 * 26 * 26 * 10 + 10);
    expect(trainer.namedParameters.map(({ name, shape }) => [name, shape])).to.deep.equal([
      ['0.weight', [8, 1, 3, 3]],
      ['0.bias', [8]],
      ['1.weight', [8]],
      ['1.bias', [8]],
      ['3.weight', [10, 5408]],
      ['3.bias', [10]],
    ]);
    expect(trainer.namedBuffers.map(({ name }) => name)).to.deep.equal([
      '1.running_mean',
      '1.running_var',
      '1.num_batches_tracked',
    ]);
  });

  it('describing the model first leaves a seeded run unchanged', async () => {
    const data = blobDataset(128);
    const plain = noisyTrainer();
    await plain.fit(data);
    const described = noisyTrainer();
    expect(described.parameterCount).to.be.above(0);
    await described.fit(data);
    const [a, b] = [await plain.stateDict(), await described.stateDict()];
    for (const name of Object.keys(a))
      expect(Array.from(b[name].data as Float32Array), name).to.deep.equal(Array.from(a[name].data as Float32Array));
  });
});
