// A module whose forward returns several tensors (an array or an object, as
// PyTorch's tuple and dict): the loss and metrics read the one config.lossOutput
// names (the first by default), predict and TorchScript export return them all.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Model, nn, Tensor, TensorData, Trainer, TrainerConfig } from '../src';
import { blobDataset, errorOf, makeBlobs, pythonJson, rejectionOf } from './support/helpers';

type Returns = 'tensor' | 'object' | 'array';

/** Logits and the features they came from: one tensor, { logits, features } or [features, logits]. */
class Heads extends nn.Module {
  body = nn.sequential(nn.linear(4, 16), nn.relu());
  head = nn.linear(16, 2);

  constructor(private readonly returns: Returns) {
    super();
  }

  forward(x: Tensor): Tensor | Tensor[] | { logits: Tensor; features: Tensor } {
    const features = this.body.forward(x);
    const logits = this.head.forward(features);
    if (this.returns === 'tensor') return logits;
    return this.returns === 'object' ? { logits, features } : [features, logits];
  }
}

const config = { numEpochs: 2, batchSize: 16, progressBar: false, numThreads: 1, metrics: ['accuracy' as const] };
const trainerFor = (returns: Returns, extra: Partial<TrainerConfig> = {}) =>
  new Trainer({
    model: new Heads(returns),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 0.01 },
    config: { ...config, ...extra },
  });
const probe = makeBlobs(6).inputs;

describe('modules with several outputs', () => {
  let alone: Trainer;
  let aloneHistory: Awaited<ReturnType<Trainer['fit']>>;
  before(async () => {
    alone = trainerFor('tensor');
    aloneHistory = await alone.fit(blobDataset(64), { evalData: blobDataset(32, 4, 5) });
  });

  for (const [returns, lossOutput] of [
    ['object', undefined],
    ['array', '1'],
  ] as const) {
    it(`trains a forward returning an ${returns} on ${lossOutput === undefined ? 'its first output' : `output '${lossOutput}'`} exactly as on that output alone`, async () => {
      const trainer = trainerFor(returns, { lossOutput });
      const history = await trainer.fit(blobDataset(64), { evalData: blobDataset(32, 4, 5) });
      const expected = aloneHistory.epochs;
      expect(
        history.epochs.map((epoch) => [epoch.loss, epoch.accuracy, epoch.valLoss, epoch.valAccuracy]),
      ).to.deep.equal(expected.map((epoch) => [epoch.loss, epoch.accuracy, epoch.valLoss, epoch.valAccuracy]));
      const [weights, reference] = [await trainer.stateDict(), await alone.stateDict()];
      for (const key of Object.keys(reference)) expect(weights[key].data, key).to.deep.equal(reference[key].data);
    });
  }

  it('predicts every output, as forward returned them (an object by key, an array in order)', async () => {
    const logits = await alone.predict(probe, [6, 4]);
    const object = trainerFor('object');
    await object.fit(blobDataset(64));
    const byName = await object.predict<{ logits: TensorData; features: TensorData }>(probe, [6, 4]);
    expect(Object.keys(byName)).to.deep.equal(['logits', 'features']);
    expect(byName.logits.shape).to.deep.equal([6, 2]);
    expect(byName.features.shape).to.deep.equal([6, 16]);
    expect(Array.from(byName.logits.data)).to.deep.equal(Array.from(logits.data));

    const array = trainerFor('array', { lossOutput: '1' });
    await array.fit(blobDataset(64));
    const inOrder = await array.predict<TensorData[]>(probe, [6, 4], { batchSize: 4 });
    expect(inOrder.map((output) => output.shape)).to.deep.equal([
      [6, 16],
      [6, 2],
    ]);
    expect(Array.from(inOrder[1].data)).to.deep.equal(Array.from(logits.data));
  });

  it('saves and loads them for inference: Model.predict returns every output', async () => {
    const trainer = trainerFor('object');
    await trainer.fit(blobDataset(64));
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-outputs-'));
    try {
      await trainer.save(path.join(folder, 'model'));
      const model = await Model.load(path.join(folder, 'model'));
      const loaded = await model.predict<Record<string, TensorData>>(probe, [6, 4]);
      const trained = await trainer.predict<Record<string, TensorData>>(probe, [6, 4]);
      expect(Object.keys(loaded)).to.deep.equal(['logits', 'features']);
      for (const name of ['logits', 'features'])
        expect(Array.from(loaded[name].data)).to.deep.equal(Array.from(trained[name].data));
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("exports a tuple and a dict that Python's torch.jit.load runs to the same outputs", async function () {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-outputs-python-'));
    try {
      const expected: Record<string, number[]> = {};
      for (const returns of ['object', 'array'] as const) {
        const trainer = trainerFor(returns);
        await trainer.exportTorchScript(path.join(folder, `${returns}.pt`));
        const outputs = await trainer.predict<Record<string, TensorData>>(probe, [6, 4]);
        for (const [name, output] of Object.entries(outputs)) expected[`${returns}.${name}`] = Array.from(output.data);
      }
      fs.writeFileSync(path.join(folder, 'input.json'), JSON.stringify(Array.from(probe)));
      const script = `import json, sys, torch
x = torch.tensor(json.load(open(sys.argv[1] + '/input.json'))).reshape(6, 4)
out = {}
for kind in ('object', 'array'):
    m = torch.jit.load(sys.argv[1] + '/' + kind + '.pt')
    m.eval()
    y = m(x)
    items = y.items() if isinstance(y, dict) else enumerate(y)
    assert isinstance(y, dict if kind == 'object' else tuple), type(y)
    for name, value in items:
        out[kind + '.' + str(name)] = value.flatten().tolist()
print(json.dumps(out))`;
      const actual = pythonJson(this, script, folder) as Record<string, number[]>;
      expect(Object.keys(actual)).to.deep.equal(Object.keys(expected));
      for (const [key, values] of Object.entries(expected))
        actual[key].forEach((value, i) => expect(value, key).to.be.closeTo(values[i], 1e-6));
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('trains and predicts a TorchScript file whose forward returns a tuple; refuses a Dict at setup', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-outputs-script-'));
    try {
      const array = trainerFor('array', { lossOutput: '1' });
      await array.fit(blobDataset(64));
      await array.exportTorchScript(path.join(folder, 'tuple.pt'));
      const scripted = new Trainer({
        model: nn.torchScript(path.join(folder, 'tuple.pt')),
        loss: 'cross_entropy',
        optimizer: 'adamw',
        config: { ...config, lossOutput: '1' },
      });
      // TorchScript runs the layers one by one, as optimizeForInference: false does: bit for bit.
      const [expected, actual] = [
        await array.predict<TensorData[]>(probe, [6, 4], { optimizeForInference: false }),
        await scripted.predict<TensorData[]>(probe, [6, 4]),
      ];
      expect(actual.map((output) => output.data)).to.deep.equal(expected.map((output) => output.data));
      const evalData = blobDataset(32, 4, 5);
      expect((await scripted.evaluate(evalData)).loss).to.be.closeTo((await array.evaluate(evalData)).loss, 1e-6);

      await trainerFor('object').exportTorchScript(path.join(folder, 'dict.pt'));
      const dict = await rejectionOf(
        new Trainer({
          model: nn.torchScript(path.join(folder, 'dict.pt')),
          loss: 'cross_entropy',
          optimizer: 'sgd',
          config,
        }).setup(),
      );
      expect(dict.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(dict.message).to.contain(
        'dict.pt: forward returns a Dict[str, Tensor]; a TorchScript forward must return a Tensor or a tuple of Tensors',
      );
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  describe('errors', () => {
    it('names the outputs when config.lossOutput is not one of them, and refuses it for a single tensor', async () => {
      const unknown = await rejectionOf(trainerFor('object', { lossOutput: 'logit' }).setup());
      expect(unknown.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(unknown.message).to.equal(
        "config.lossOutput is 'logit', which the model's forward does not return; it returns 'logits', 'features'",
      );
      const single = await rejectionOf(trainerFor('tensor', { lossOutput: 'logits' }).setup());
      expect(single.message).to.equal(
        "config.lossOutput is 'logits', but the model's forward returns one tensor; lossOutput picks one of several outputs",
      );
    });

    it('refuses a forward that returns anything but tensors, naming the entry', () => {
      const returning = (value: (x: Tensor) => unknown) =>
        new (class Odd extends nn.Module {
          fc = nn.linear(4, 2);
          forward(x: Tensor): Tensor {
            return value(this.fc.forward(x)) as Tensor;
          }
        })();
      const traced = (value: (x: Tensor) => unknown) =>
        errorOf(() => new Trainer({ model: returning(value), loss: 'mse', optimizer: 'sgd', config }).namedParameters);
      expect(traced((x) => [x, 3]).message).to.equal(
        'Odd.forward returned a number at [1]; it must return a tensor, an array of tensors or an object of tensors',
      );
      expect(traced((x) => ({ logits: x, extra: undefined })).message).to.contain(
        'Odd.forward returned undefined at .extra',
      );
      expect(traced(() => ({})).message).to.equal(
        'Odd.forward returned an empty object; it must return a tensor, an array of tensors or an object of tensors',
      );
      expect(traced((x) => new Map([['x', x]])).message).to.equal(
        'Odd.forward must return a tensor, an array of tensors or an object of tensors; it returned a Map',
      );
    });

    it('refuses a module with several outputs inside nn.sequential, naming it', () => {
      const error = errorOf(
        () =>
          new Trainer({ model: nn.sequential(new Heads('array'), nn.relu()), loss: 'mse', optimizer: 'sgd', config })
            .namedParameters,
      );
      expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(error.message).to.equal(
        'nn.sequential: module 0 (Heads) returned several outputs; a Sequential hands one tensor from module to module',
      );
    });
  });
});
