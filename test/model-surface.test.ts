// One model surface: trainer.model is a Model over the trainer's live model
// (its thread, between two steps during fit), Model.load gives the same kind
// of object, and Trainer's predict, generate, exports and stateDict are
// delegates to it.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Model, nn, NumericArray, TensorData, Trainer } from '../src';
import { blobDataset, blobTrainer, errorOf, makeBlobs } from './support/helpers';

const probe = makeBlobs(6).inputs;

describe('one model surface', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-surface-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('trainer.model is a Model over the live weights: what the trainer answers, it answers', async () => {
    const trainer = blobTrainer({ numEpochs: 1 });
    await trainer.fit(blobDataset(64));
    const model = trainer.model;
    expect(model).to.be.instanceOf(Model);
    expect(trainer.model).to.equal(model);
    expect(model.predictBatchSize).to.equal(trainer.config.evalBatchSize);
    const fromTrainer = await trainer.predict(probe, [6, 4]);
    const fromModel = await model.predict(probe, [6, 4]);
    expect(Array.from(fromModel.data)).to.deep.equal(Array.from(fromTrainer.data));
    expect(model.namedParameters).to.deep.equal(trainer.namedParameters);
    expect(model.parameterCount).to.equal(trainer.parameterCount);
    const state = await model.stateDict();
    expect(Object.keys(state)).to.deep.equal(Object.keys(await trainer.stateDict()));
    // More training moves the weights the handed-out Model reads.
    await trainer.fit(blobDataset(64));
    const weight = (dict: Record<string, TensorData<NumericArray>>) =>
      Array.from(dict['0.weight'].data as Float32Array);
    expect(weight(await model.stateDict())).to.not.deep.equal(weight(state));
  });

  it('frozen parameters show in trainer.model.namedParameters as they are now', async () => {
    const trainer = blobTrainer({ numEpochs: 1 });
    await trainer.setup();
    expect(trainer.model.namedParameters.every(({ requiresGrad }) => requiresGrad)).to.equal(true);
    await trainer.freeze('0');
    expect(
      trainer.model.namedParameters.filter(({ requiresGrad }) => !requiresGrad).map(({ name }) => name),
    ).to.deep.equal(['0.weight', '0.bias']);
  });

  it('trainer.model predicts from a hook during fit, between two steps', async () => {
    const seen: number[][] = [];
    const trainer = blobTrainer(
      { numEpochs: 2 },
      {
        callbacks: {
          postTrainBatch: async (_batch, running) => {
            if (running.globalStep === 3) seen.push(Array.from((await running.model.predict(probe, [6, 4])).data));
          },
        },
      },
    );
    await trainer.fit(blobDataset(64));
    expect(seen).to.have.length(1);
    expect(seen[0]).to.have.length(12);
    expect(seen[0].every(Number.isFinite)).to.equal(true);
  });

  it('trainer.model before setup says to set up first', () => {
    const error = errorOf(() => blobTrainer().model);
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_STATE');
    expect(error.message).to.contain('await trainer.setup() first');
  });

  it('a loaded Model exports TorchScript and gives its state dict and parameters, as its trainer did', async () => {
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(4, 8), nn.batchNorm1d(8), nn.relu(), nn.linear(8, 2)),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { numEpochs: 1, batchSize: 16, progressBar: false, seed: 4 },
    });
    await trainer.fit(blobDataset(64));
    await trainer.save(path.join(dir, 'saved'));
    const loaded = await Model.load(path.join(dir, 'saved'));
    expect(loaded.namedParameters).to.deep.equal(trainer.namedParameters);
    expect(loaded.namedBuffers).to.deep.equal(trainer.namedBuffers);
    const [loadedState, trainedState] = [await loaded.stateDict(), await trainer.stateDict()];
    expect(Object.keys(loadedState)).to.deep.equal(Object.keys(trainedState));
    for (const name of Object.keys(trainedState)) {
      expect(Array.from(loadedState[name].data as Float32Array), name).to.deep.equal(
        Array.from(trainedState[name].data as Float32Array),
      );
    }
    await loaded.exportTorchScript(path.join(dir, 'loaded.pt'));
    const reloaded = new Trainer({
      model: nn.torchScript(path.join(dir, 'loaded.pt')),
      loss: 'cross_entropy',
      optimizer: 'sgd',
    });
    // TorchScript runs the layers one by one, as optimizeForInference: false does: bit for bit.
    const expected = await loaded.predict(probe, [6, 4], { optimizeForInference: false });
    const actual = await reloaded.predict(probe, [6, 4]);
    expect(Array.from(actual.data)).to.deep.equal(Array.from(expected.data));
  });
});
