// trainer.save(folder) and Model.load(folder): a trained model for inference.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, Model, nn, Trainer } from '../src';
import { blobDataset, blobTrainer, makeBlobs, rejectionOf } from './support/helpers';

const scripted = path.join(__dirname, '..', '..', 'test', 'fixtures', 'scripted');

describe('saved models for inference', () => {
  const probe = makeBlobs(6).inputs;

  async function roundTrip(trainer: Trainer, data: Dataset, shape: number[]): Promise<void> {
    await trainer.fit(data);
    const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-model-')), 'model');
    await trainer.save(folder);
    const model = await Model.load(folder);
    expect(model.parameterCount).to.equal(trainer.parameterCount);
    expect(model.device).to.equal('cpu');
    const expected = await trainer.predict(probe, shape);
    const actual = await model.predict(probe, shape, { batchSize: 4 });
    expect(Array.from(actual.data)).to.deep.equal(Array.from(expected.data));
    fs.rmSync(path.dirname(folder), { recursive: true });
  }

  it('saves and loads a sequential model with the same predictions', async () => {
    await roundTrip(blobTrainer({ numEpochs: 2 }), blobDataset(64), [6, 4]);
  });

  it('predicts bit for bit what the trainer predicted, batching as its evalBatchSize did by default', async () => {
    const samples = 300;
    const trainer = new Trainer({
      model: nn.sequential(
        nn.conv2d(1, 8, 3),
        nn.relu(),
        nn.flatten(),
        nn.linear(8 * 6 * 6, 64),
        nn.relu(),
        nn.linear(64, 3),
      ),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      // A fixed thread count: numThreads 'auto' tunes it while training, and another count may sum a
      // kernel's parts in another order (the last bits; docs/guides/training.md, saving).
      config: { numEpochs: 1, batchSize: 16, progressBar: false, seed: 2, numThreads: 2 },
    });
    const inputs = Float32Array.from({ length: samples * 64 }, (_, i) => Math.sin(i * 0.37));
    const targets = Int32Array.from({ length: samples }, (_, i) => i % 3);
    await trainer.fit(Dataset.fromArrays({ inputs, inputShape: [samples, 1, 8, 8], targets }));
    const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-model-')), 'model');
    await trainer.save(folder);
    const model = await Model.load(folder);
    expect(model.predictBatchSize).to.equal(16);
    const expected = await trainer.predict(inputs, [samples, 1, 8, 8]);
    const actual = await model.predict(inputs, [samples, 1, 8, 8]);
    expect(Buffer.from(actual.data.buffer).equals(Buffer.from(expected.data.buffer))).to.equal(true);
    fs.rmSync(path.dirname(folder), { recursive: true });
  });

  it('saves and loads a model defined from TorchScript source', async () => {
    const model = nn.script(
      `
def forward(self, x):
    return x.matmul(self.weight) + self.bias
`,
      [
        { name: 'weight', data: new Float32Array(8), shape: [4, 2] },
        { name: 'bias', data: new Float32Array(2), shape: [2] },
      ],
    );
    await roundTrip(
      new Trainer({ model, loss: 'cross_entropy', optimizer: 'adam', config: { numEpochs: 2, progressBar: false } }),
      blobDataset(64),
      [6, 4],
    );
  });

  it('saves a TorchScript module as trained, with model.pt', async () => {
    const trainer = new Trainer({
      model: nn.torchScript(path.join(scripted, 'classifier.pt')),
      loss: 'cross_entropy',
      optimizer: { name: 'sgd', lr: 0.1 },
      config: { numEpochs: 1, progressBar: false, batchSize: 8 },
    });
    const samples = 16;
    const features = 4;
    const inputs = Float32Array.from({ length: samples * features }, (_, i) => Math.sin(i));
    const data = Dataset.fromArrays({
      inputs,
      inputShape: [samples, features],
      targets: Int32Array.from({ length: samples }, (_, i) => i % 3),
    });
    const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-model-')), 'model');
    await trainer.fit(data);
    await trainer.save(folder);
    expect(fs.readdirSync(folder).sort()).to.deep.equal(['firebrand_model.json', 'model.pt', 'model.safetensors']);
    const loaded = await Model.load(folder);
    const probeInputs = inputs.subarray(0, 3 * features);
    expect(Array.from((await loaded.predict(probeInputs, [3, features])).data)).to.deep.equal(
      Array.from((await trainer.predict(probeInputs, [3, features])).data),
    );
    fs.rmSync(path.dirname(folder), { recursive: true });
  });

  it('names a folder that holds no saved model', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-model-'));
    expect((await rejectionOf(Model.load(folder))).message).to.equal(
      `${folder}: not a saved firebrand model (no firebrand_model.json); trainer.save(folder) writes one`,
    );
    fs.rmSync(folder, { recursive: true });
  });
});
