// TypeScript modules through the public API: PyTorch's names, parameters and
// buffers of their own, shared weights, traced control flow, errors that name
// the module path, op, shapes and source line, saving and loading.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Callback, Dataset, F, Layer, Model, Module, nn, Parameter, Tensor, torch, Trainer } from '../src';
import { ResNet18 } from '../examples/models/resnet';
import { blobDataset, errorOf, makeBlobs, pythonJson, rejectionOf } from './support/helpers';
import { expectClose } from './support/expect-close';

/** y = x Wᵀ + b with its own parameters, initialised as torch.nn.Linear does. */
class MyLinear extends nn.Module {
  weight: Parameter;
  bias: Parameter;

  constructor(inFeatures: number, outFeatures: number) {
    super();
    this.weight = new nn.Parameter([outFeatures, inFeatures]);
    this.bias = new nn.Parameter([outFeatures]);
    nn.init.kaimingUniform_(this.weight, { a: Math.sqrt(5) });
    const bound = 1 / Math.sqrt(inFeatures);
    nn.init.uniform_(this.bias, { a: -bound, b: bound });
  }

  forward(x: Tensor): Tensor {
    return F.linear(x, this.weight, this.bias);
  }
}

/** A residual MLP: the same block applied `depth` times (shared weights), a scale buffer, a skip. */
class ResidualMlp extends nn.Module {
  inProj = new MyLinear(4, 16);
  block = nn.sequential(nn.linear(16, 16), nn.gelu());
  norm = nn.layerNorm(16);
  head = nn.linear(16, 2);
  scale = new nn.Buffer([1], { fill: 0.5 });

  constructor(private readonly depth = 2) {
    super();
  }

  forward(x: Tensor): Tensor {
    let h = F.relu(this.inProj.forward(x));
    for (let i = 0; i < this.depth; i += 1) h = h.add(this.block.forward(h).mul(this.scale));
    return this.head.forward(this.norm.forward(h));
  }
}

const config = { numEpochs: 3, batchSize: 16, progressBar: false, numThreads: 1 };
const trainerFor = (model: Module) =>
  new Trainer({ model, loss: 'cross_entropy', optimizer: { name: 'adamw', lr: 0.01 }, config });

describe('models written as TypeScript modules', () => {
  it("names parameters and buffers as PyTorch does, in PyTorch's order", () => {
    const trainer = trainerFor(new ResidualMlp());
    expect(trainer.namedParameters.map(({ name, shape }) => `${name} ${shape.join('x')}`)).to.deep.equal([
      'inProj.weight 16x4',
      'inProj.bias 16',
      'block.0.weight 16x16',
      'block.0.bias 16',
      'norm.weight 16',
      'norm.bias 16',
      'head.weight 2x16',
      'head.bias 2',
    ]);
    expect(trainer.namedBuffers.map(({ name }) => name)).to.deep.equal(['scale']);
  });

  it("orders the state dict as PyTorch's state_dict(): module by module, parameters then buffers", async () => {
    const bn = new Trainer({
      model: nn.sequential(nn.linear(4, 8), nn.batchNorm1d(8), nn.relu(), nn.linear(8, 2)),
      loss: 'cross_entropy',
      optimizer: 'sgd',
      config,
    });
    expect(Object.keys(await bn.stateDict())).to.deep.equal([
      '0.weight',
      '0.bias',
      '1.weight',
      '1.bias',
      '1.running_mean',
      '1.running_var',
      '1.num_batches_tracked',
      '3.weight',
      '3.bias',
    ]);
    // torchvision's resnet18().state_dict() begins so, and its buffers sit with their BatchNorm.
    const resnet = trainerFor(new ResNet18({ inChannels: 1, numClasses: 10 }));
    const keys = Object.keys(await resnet.stateDict());
    expect(keys.slice(0, 13)).to.deep.equal([
      'conv1.weight',
      'bn1.weight',
      'bn1.bias',
      'bn1.running_mean',
      'bn1.running_var',
      'bn1.num_batches_tracked',
      'layer1.0.conv1.weight',
      'layer1.0.bn1.weight',
      'layer1.0.bn1.bias',
      'layer1.0.bn1.running_mean',
      'layer1.0.bn1.running_var',
      'layer1.0.bn1.num_batches_tracked',
      'layer1.0.conv2.weight',
    ]);
    expect(keys.slice(-2)).to.deep.equal(['fc.weight', 'fc.bias']);
    expect(keys).to.have.length(122);
  });

  it('trains: a module applied twice shares its weights, and the loss falls', async () => {
    const twice = trainerFor(new ResidualMlp(2));
    const once = trainerFor(new ResidualMlp(1));
    expect(twice.parameterCount).to.equal(once.parameterCount);
    const history = await twice.fit(blobDataset(128));
    expect(history.epochs[2].loss).to.be.below(history.epochs[0].loss);
    expect((await twice.evaluate(blobDataset(64, 4, 7))).accuracy).to.be.above(0.8);
  });

  it('casts a module with to(dtype), as PyTorch does: the whole model casts its inputs, a part cast alone is named', async () => {
    class Net extends nn.Module {
      body = nn.linear(4, 8);
      head = nn.linear(8, 2);

      forward(x: Tensor): Tensor {
        return this.head.forward(this.body.forward(x).relu());
      }
    }
    const seeded = { ...config, seed: 1 };
    const probe = Float32Array.from({ length: 12 }, (_, i) => Math.sin(i));
    const predictionOf = (model: Module) =>
      new Trainer({ model, loss: 'cross_entropy', optimizer: 'sgd', config: seeded }).predict(probe, [3, 4]);
    const float32 = await predictionOf(new Net());
    // The same seeded weights in float64: the float32 inputs are widened, the outputs agree to float32's rounding.
    expectClose(await predictionOf(new Net().to('float64')), float32, 'float64', { tolerance: 1e-6 });
    const bfloat16 = await predictionOf(new Net().to('bfloat16'));
    expectClose(bfloat16, float32, 'bfloat16', { tolerance: 2 ** -6 });
    expect(
      Array.from(bfloat16.data).every((v) => (new Uint32Array(Float32Array.of(v).buffer)[0] & 0xffff) === 0),
    ).to.equal(true);
    const partly = new Net();
    partly.head.to('bfloat16');
    const error = await rejectionOf(predictionOf(partly));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.contain(
      "head (linear) holds bfloat16 weights but got [3, 8] float32: cast its input in forward (x.to('bfloat16')), or cast the whole model with model.to(dtype), which casts its inputs too",
    );
    expect(errorOf(() => new Net().to('int8' as never)).message).to.equal(
      'Net.to: dtype must be one of float32, bfloat16, float16, float64, got "int8"',
    );
  });

  it('gives one row alone (a decode step: a matrix-vector product) what that row gets in a batch', async () => {
    class Projections extends nn.Module {
      layer = nn.linear(6, 5);
      noBias = nn.linear(5, 3, { bias: false });
      functional = new MyLinear(3, 4);

      forward(x: Tensor): Tensor {
        return this.functional.forward(this.noBias.forward(this.layer.forward(x)));
      }
    }
    const trainer = new Trainer({ model: new Projections(), loss: 'mse', optimizer: 'sgd', config });
    const batch = Float32Array.from({ length: 3 * 2 * 6 }, (_, i) => Math.sin(i + 1));
    const rows = await trainer.predict(batch, [3, 2, 6]);
    for (let row = 0; row < 6; row++) {
      const alone = await trainer.predict(batch.slice(row * 6, row * 6 + 6), [1, 1, 6]);
      expect(alone.shape).to.deep.equal([1, 1, 4]);
      expectClose(alone.data, rows.data.slice(row * 4, row * 4 + 4), `row ${row}`, { tolerance: 1e-6 });
    }
  });

  it('saves and loads the traced model for inference without its TypeScript class', async () => {
    const trainer = trainerFor(new ResidualMlp());
    await trainer.fit(blobDataset(64));
    const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-module-')), 'model');
    try {
      await trainer.save(folder);
      const model = await Model.load(folder);
      const probe = makeBlobs(6).inputs;
      const expected = await trainer.predict(probe, [6, 4]);
      expect(Array.from((await model.predict(probe, [6, 4])).data)).to.deep.equal(Array.from(expected.data));
    } finally {
      fs.rmSync(path.dirname(folder), { recursive: true, force: true });
    }
  });

  it('takes a bare layer as the whole model: seeded as inside a sequential, trained, saved and loaded', async () => {
    const seeded = { ...config, seed: 3 };
    const bare = new Trainer({ model: nn.linear(4, 3), loss: 'cross_entropy', optimizer: 'sgd', config: seeded });
    const wrapped = new Trainer({
      model: nn.sequential(nn.linear(4, 3)),
      loss: 'cross_entropy',
      optimizer: 'sgd',
      config: seeded,
    });
    const [bareWeights, wrappedWeights] = [await bare.stateDict(), await wrapped.stateDict()];
    expect(Object.keys(bareWeights)).to.deep.equal(['weight', 'bias']);
    expect(bareWeights.weight.data).to.deep.equal(wrappedWeights['0.weight'].data);
    const history = await bare.fit(blobDataset(64));
    expect(history.epochs[2].loss).to.be.below(history.epochs[0].loss);
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bare-layer-'));
    try {
      await bare.save(folder);
      const probe = makeBlobs(5).inputs;
      const expected = await bare.predict(probe, [5, 4]);
      expect((await (await Model.load(folder)).predict(probe, [5, 4])).data).to.deep.equal(expected.data);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('keeps a non-persistent buffer out of the state dict, saved weights and strict loads, as register_buffer(persistent=False)', async () => {
    class Offset extends nn.Module {
      head = nn.linear(4, 2);
      running = new nn.Buffer([4], { fill: 1 });
      offset = new nn.Buffer([4], { data: [0.5, -0.5, 0.25, 0], persistent: false });
      forward(x: Tensor): Tensor {
        return this.head.forward(x.add(this.offset).mul(this.running));
      }
    }
    const trainer = trainerFor(new Offset());
    expect(trainer.namedBuffers.map(({ name }) => name)).to.deep.equal(['running', 'offset']);
    await trainer.fit(blobDataset(32));
    expect(Object.keys(await trainer.stateDict()).sort()).to.deep.equal(['head.bias', 'head.weight', 'running']);
    const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-module-')), 'model');
    try {
      await trainer.save(folder);
      const probe = makeBlobs(3).inputs;
      const expected = await trainer.predict(probe, [3, 4]);
      expect(Array.from((await (await Model.load(folder)).predict(probe, [3, 4])).data)).to.deep.equal(
        Array.from(expected.data),
      );
      const fresh = trainerFor(new Offset());
      expect(await fresh.initWeightsFrom(path.join(folder, 'model.safetensors'))).to.deep.equal({
        missing: [],
        unexpected: [],
      });
      expect(Array.from((await fresh.predict(probe, [3, 4])).data)).to.deep.equal(Array.from(expected.data));
    } finally {
      fs.rmSync(path.dirname(folder), { recursive: true, force: true });
    }
  });

  it("F.relu6, F.hardtanh and F.hardsigmoid compute torch.nn.functional's definitions", async () => {
    class Activations extends nn.Module {
      forward(x: Tensor): Tensor {
        return torch.stack([F.relu6(x), F.hardtanh(x), F.hardtanh(x, -0.5, 2), F.hardsigmoid(x)], 0);
      }
    }
    const inputs = Float32Array.from({ length: 10 }, (_, i) => (i - 4.5) * 1.7);
    const { data } = await new Trainer({ model: new Activations(), loss: 'mse', optimizer: 'sgd', config }).predict(
      inputs,
      [10],
    );
    const clamp = (x: number, low: number, high: number) => Math.min(Math.max(x, low), high);
    const expected = [
      ...Array.from(inputs, (x) => clamp(x, 0, 6)),
      ...Array.from(inputs, (x) => clamp(x, -1, 1)),
      ...Array.from(inputs, (x) => clamp(x, -0.5, 2)),
      ...Array.from(inputs, (x) => clamp(x + 3, 0, 6) / 6),
    ];
    Array.from(data as Float32Array).forEach((value, i) => expect(value).to.be.closeTo(expected[i], 1e-6));
  });

  it('splits by an int size as torch.split does, destructured, checking the count at every step', async () => {
    class Qkv extends nn.Module {
      proj = nn.linear(4, 12);
      constructor(private readonly bySize: boolean) {
        super();
      }
      forward(x: Tensor): Tensor {
        const qkv = this.proj.forward(x);
        const [q, k, v] = this.bySize ? qkv.split(4, 1) : qkv.split([4, 4, 4], 1);
        return q.add(k.mul(2)).add(v.mul(3));
      }
    }
    const probe = makeBlobs(5).inputs;
    const [bySize, bySizes] = [new Qkv(true), new Qkv(false)].map(
      (model) => new Trainer({ model, loss: 'mse', optimizer: 'sgd', config: { ...config, seed: 4 } }),
    );
    expect((await bySize.predict(probe, [5, 4])).data).to.deep.equal((await bySizes.predict(probe, [5, 4])).data);
    class Destructured extends nn.Module {
      proj = nn.linear(4, 12);
      forward(x: Tensor): Tensor {
        const [q, k] = this.proj.forward(x).split(4, 1);
        return q.add(k);
      }
    }
    const fewer = await rejectionOf(
      new Trainer({ model: new Destructured(), loss: 'mse', optimizer: 'sgd', config }).predict(probe, [5, 4]),
    );
    expect(fewer.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(fewer.message).to.match(
      /splitSize\(\[5, 12\] float32\) failed at test\/modules\.test\.ts:\d+:\d+: split\(4, 1\) of \[5, 12\] gives 3 pieces, but forward took 2/,
    );
    class Looped extends nn.Module {
      forward(x: Tensor): Tensor {
        return [...x.split(1, 1)].reduce((sum, piece) => sum.add(piece));
      }
    }
    const looped = await rejectionOf(
      new Trainer({ model: new Looped(), loss: 'mse', optimizer: 'sgd', config }).setup(),
    );
    expect(looped.code).to.equal('ERR_FIREBRAND_TRACED_VALUE');
    expect(looped.message).to.contain('destructure the pieces forward expects');
  });

  it('unrolls loops and ifs on constants, and reads sizes at every step (a smaller last batch)', async () => {
    class Reshaping extends nn.Module {
      fc = nn.linear(4, 2);
      forward(x: Tensor): Tensor {
        const batch = x.size(0);
        const doubled = torch.cat([x, x], 1).view(batch, 2, 4).mean(1);
        return this.fc.forward(doubled.reshape(batch, -1));
      }
    }
    const trainer = new Trainer({
      model: new Reshaping(),
      loss: 'cross_entropy',
      optimizer: 'sgd',
      config: { ...config, batchSize: 30, numEpochs: 1 },
    });
    const history = await trainer.fit(blobDataset(64));
    expect(history.epochs).to.have.length(1);
  });

  it('takes several dataset fields by name (inputFields), in fit and in predict (trainer and Model.load)', async () => {
    class Masked extends nn.Module {
      fc = nn.linear(4, 2);
      override inputFields(): string[] {
        return ['input', 'keep'];
      }
      forward(x: Tensor, keep: Tensor): Tensor {
        return this.fc.forward(x.mul(keep));
      }
    }
    const { inputs, labels } = makeBlobs(64);
    const keep = Float32Array.from({ length: 256 }, (_, i) => (i % 4 === 3 ? 0 : 1));
    const data = Dataset.fromFields({
      input: { data: inputs, shape: [64, 4] },
      keep: { data: keep, shape: [64, 4] },
      target: { data: labels, shape: [64] },
    });
    const trainer = trainerFor(new Masked());
    const history = await trainer.fit(data);
    expect(history.epochs[2].loss).to.be.below(history.epochs[0].loss);
    const missing = await rejectionOf(trainerFor(new Masked()).fit(blobDataset(32)));
    expect(missing.message).to.contain("batch: no field 'keep' (it has input, target)");
    const predicted = await rejectionOf(trainer.predict(inputs, [64, 4]));
    expect(predicted.message).to.contain(
      "model: forward takes 2 inputs ('input', 'keep'), so it needs a batch of those fields; give predict an object of them by name",
    );
    // By name: the same as the one-input model fed input * keep.
    const fields = { input: { data: inputs, shape: [64, 4] }, keep: { data: keep, shape: [64, 4] } };
    const byName = await trainer.predict(fields, { batchSize: 10 });
    const state = await trainer.stateDict();
    const product = Float32Array.from(inputs, (value, i) => value * keep[i]);
    const weight = state['fc.weight'].data as Float32Array;
    const bias = state['fc.bias'].data as Float32Array;
    const expected = Array.from({ length: 128 }, (_, i) => {
      const [sample, out] = [Math.floor(i / 2), i % 2];
      let sum = bias[out];
      for (let j = 0; j < 4; j += 1) sum += product[sample * 4 + j] * weight[out * 4 + j];
      return sum;
    });
    expectClose(byName, expected, 'predict by name');
    const saved = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-fields-'));
    try {
      await trainer.save(saved);
      const loaded = await Model.load(saved);
      expectClose(await loaded.predict(fields, { batchSize: 10 }), byName, 'Model.load predict by name', {
        tolerance: 0,
      });
    } finally {
      fs.rmSync(saved, { recursive: true, force: true });
    }
    const short = await rejectionOf(trainer.predict({ ...fields, keep: { data: keep.slice(0, 8), shape: [2, 4] } }));
    expect(short.message).to.contain('every input field needs the same number of samples');
  });

  it('trains with parameter groups by module path, bf16 autocast, accumulation and clipping', async () => {
    const trainer = new Trainer({
      model: new ResidualMlp(),
      loss: 'cross_entropy',
      // The head is frozen by a learning rate of 0 in its own group (found by its module path).
      optimizer: { name: 'sgd', lr: 0.1, momentum: 0.9, paramGroups: [{ params: ['head.'], lr: 0 }] },
      config: { ...config, mixedPrecision: 'bf16', gradientAccumulationSteps: 2, maxGradNorm: 1 },
    });
    const before = await trainer.stateDict();
    const history = await trainer.fit(blobDataset(128));
    expect(history.epochs.every((epoch) => Number.isFinite(epoch.loss))).to.equal(true);
    expect(trainer.learningRates).to.deep.equal([0, 0.1]); // the head's group, then the rest
    const after = await trainer.stateDict();
    expect(Array.from(after['head.weight'].data as Float32Array)).to.deep.equal(
      Array.from(before['head.weight'].data as Float32Array),
    );
    expect(Array.from(after['inProj.weight'].data as Float32Array)).to.not.deep.equal(
      Array.from(before['inProj.weight'].data as Float32Array),
    );
  });

  it('resumes from a checkpoint to bit-identical weights (dropout, BatchNorm buffers, shuffling)', async () => {
    class Noisy extends nn.Module {
      fc1 = nn.linear(4, 16);
      bn = nn.batchNorm1d(16);
      fc2 = nn.linear(16, 2);
      forward(x: Tensor): Tensor {
        return this.fc2.forward(F.dropout(F.relu(this.bn.forward(this.fc1.forward(x))), 0.3));
      }
    }
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-module-resume-'));
    const make = (extra: object, callbacks: Callback[] = []) =>
      new Trainer({
        model: new Noisy(),
        loss: 'cross_entropy',
        optimizer: { name: 'adamw', lr: 0.01 },
        config: { ...config, ...extra },
        callbacks,
      });
    try {
      const whole = make({});
      await whole.fit(blobDataset(96));
      const stopped = make({ outputDir, saveEvery: 4 }, [
        {
          onLog: (logs, trainer) => {
            if (logs.globalStep >= 10) trainer.stopTraining = true;
          },
        },
      ]);
      await stopped.fit(blobDataset(96));
      const resumed = make({ outputDir, resumeFromCheckpoint: true });
      await resumed.fit(blobDataset(96));
      const [expected, actual] = [await whole.stateDict(), await resumed.stateDict()];
      for (const name of Object.keys(expected))
        expect(Array.from(actual[name].data as Float32Array), name).to.deep.equal(
          Array.from(expected[name].data as Float32Array),
        );
    } finally {
      fs.rmSync(outputDir, { recursive: true, force: true });
    }
  });

  describe('TorchScript export', () => {
    /** Many ops in one forward: chunk, views of traced sizes, max over a dim, where, arange, cat, layerNorm, dropout. */
    class OpsZoo extends nn.Module {
      fc = nn.linear(4, 8);
      head = nn.linear(8, 2);
      forward(x: Tensor): Tensor {
        const [a, b] = this.fc.forward(x).chunk(2, 1);
        let y = a.mul(b.sigmoid()).add(F.gelu(a, 'tanh'), 0.5);
        const batch = x.size(0);
        y = y.view(batch, 2, 2).transpose(1, 2).reshape(batch, -1);
        const [top] = y.max(1, true);
        y = torch.where(y.gt(0), y, y.mul(0.1)).sub(top.mul(0.01));
        y = y.clamp(-3, 3).add(torch.arange(4, { dtype: 'float32' }).mul(0.01));
        y = F.dropout(torch.cat([y, F.layerNorm(y, [4])], 1), 0.1);
        return this.head.forward(y.logSoftmax(1).exp());
      }
    }
    const probe = makeBlobs(6).inputs;
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-module-export-'));
    after(() => fs.rmSync(folder, { recursive: true, force: true }));

    for (const [name, build, shape, input] of [
      ['a module using many ops', () => new OpsZoo(), [6, 4], probe],
      ['a residual MLP calling one block twice', () => new ResidualMlp(2), [6, 4], probe],
      [
        'ResNet-18 (BatchNorm)',
        () => new ResNet18({ width: 4, numClasses: 3 }),
        [2, 3, 8, 8],
        Float32Array.from({ length: 384 }, (_, i) => Math.sin(i)),
      ],
    ] as const) {
      it(`exports ${name} that torch.jit.load runs to the same outputs`, async () => {
        const trainer = trainerFor(build());
        if (shape.length === 2) await trainer.fit(blobDataset(64));
        const file = path.join(folder, `${name.replace(/\W+/g, '-')}.pt`);
        await trainer.exportTorchScript(file);
        // TorchScript runs BatchNorm after each convolution: so does predict without the inference lowering.
        const expected = await trainer.predict(input, [...shape], { optimizeForInference: false });
        const reloaded = new Trainer({ model: nn.torchScript(file), loss: 'cross_entropy', optimizer: 'sgd', config });
        expect(reloaded.parameterCount).to.equal(trainer.parameterCount);
        const actual = await reloaded.predict(input, [...shape]);
        expect(Array.from(actual.data)).to.deep.equal(Array.from(expected.data));
      });
    }
  });

  it("exports a ResNet-18 that Python's torch.jit.load runs to the same outputs", async function () {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-module-python-'));
    try {
      const trainer = trainerFor(new ResNet18({ width: 4, numClasses: 3 }));
      const input = Float32Array.from({ length: 384 }, (_, i) => Math.sin(i));
      await trainer.exportTorchScript(path.join(folder, 'model.pt'));
      const expected = await trainer.predict(input, [2, 3, 8, 8]);
      fs.writeFileSync(path.join(folder, 'input.json'), JSON.stringify(Array.from(input)));
      const script = `import json, sys, torch
m = torch.jit.load(sys.argv[1] + '/model.pt')
m.eval()
x = torch.tensor(json.load(open(sys.argv[1] + '/input.json'))).reshape(2, 3, 8, 8)
print(json.dumps(m(x).flatten().tolist()))`;
      const actual = pythonJson(this, script, folder) as number[];
      actual.forEach((value, i) => expect(value).to.be.closeTo(expected.data[i] as number, 1e-6));
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("exports a model cast to float64 that Python's torch.jit.load runs on float32 inputs, casting them as predict does", async function () {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-module-python-'));
    try {
      const trainer = trainerFor(new ResidualMlp().to('float64'));
      const input = Float32Array.from({ length: 12 }, (_, i) => Math.sin(i));
      await trainer.exportTorchScript(path.join(folder, 'model.pt'));
      const expected = await trainer.predict(input, [3, 4]);
      fs.writeFileSync(path.join(folder, 'input.json'), JSON.stringify(Array.from(input)));
      const script = `import json, sys, torch
m = torch.jit.load(sys.argv[1] + '/model.pt')
m.eval()
y = m(torch.tensor(json.load(open(sys.argv[1] + '/input.json'))).reshape(3, 4))
assert y.dtype == torch.float64, y.dtype
print(json.dumps(y.flatten().tolist()))`;
      const actual = pythonJson(this, script, folder) as number[];
      actual.forEach((value, i) => expect(value).to.be.closeTo(expected.data[i] as number, 1e-6));
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  describe('errors', () => {
    it('refuses a branch on a tensor value at trace time, saying why', async () => {
      class Branchy extends nn.Module {
        fc = nn.linear(4, 2);
        forward(x: Tensor): Tensor {
          return (x.sum() as unknown as number) > 0 ? this.fc.forward(x) : x;
        }
      }
      const error = await rejectionOf(trainerFor(new Branchy()).setup());
      expect(error.code).to.equal('ERR_FIREBRAND_TRACED_VALUE');
      expect(error.message).to.match(/^test\/modules\.test\.ts:\d+:\d+: a traced tensor used as a number/);
      expect(error.message).to.contain("an 'if' or loop cannot depend on a tensor's values");
    });

    it("refuses a tensor used as a boolean (always true in JavaScript) by its unused result, naming the op's line", async () => {
      class Truthy extends nn.Module {
        fc = nn.linear(4, 2);
        forward(x: Tensor): Tensor {
          // A Tensor object is truthy: this branch was always taken, silently.
          return x.min() ? this.fc.forward(x) : this.fc.forward(x.neg());
        }
      }
      const error = await rejectionOf(trainerFor(new Truthy()).setup());
      expect(error.code).to.equal('ERR_FIREBRAND_TRACED_VALUE');
      expect(error.message).to.match(
        /^forward: minAll at test\/modules\.test\.ts:\d+:\d+ computes a tensor that nothing uses/,
      );
      expect(error.message).to.contain('`if (x.min())` is always true');
      class Template extends nn.Module {
        forward(x: Tensor): Tensor {
          if (`${x.max()}` === '') return x.neg();
          return x;
        }
      }
      expect((await rejectionOf(trainerFor(new Template()).setup())).message).to.contain(
        'a traced tensor used as a string',
      );
    });

    it('refuses a plain array of modules, a module registered twice and a layer outside the model', () => {
      class Listed extends nn.Module {
        blocks = [nn.linear(4, 4)];
        forward(x: Tensor): Tensor {
          return x;
        }
      }
      expect(errorOf(() => trainerFor(new Listed()).namedParameters).message).to.equal(
        'blocks: a plain array of modules or tensors is not registered (as in PyTorch); use nn.moduleList([...]), or a Parameter/Buffer field',
      );
      class Twice extends nn.Module {
        a = nn.linear(4, 4);
        b = this.a;
        forward(x: Tensor): Tensor {
          return this.b.forward(x);
        }
      }
      expect(errorOf(() => trainerFor(new Twice()).namedParameters).message).to.contain(
        "b: this module is also the field 'a'",
      );
      const stray = nn.linear(4, 2);
      class Outside extends nn.Module {
        fc = nn.linear(4, 4);
        forward(x: Tensor): Tensor {
          return stray.forward(this.fc.forward(x));
        }
      }
      const error = errorOf(() => trainerFor(new Outside()).namedParameters);
      expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(error.message).to.contain('forward called a Linear that is not a field of the model');
    });

    it('names the module path, op, shapes and source line of an op that does not fit, before the first step', async () => {
      class Mismatch extends nn.Module {
        proj = new (class Projection extends nn.Module {
          weight = new nn.Parameter([3, 3]);
          forward(x: Tensor): Tensor {
            return x.matmul(this.weight);
          }
        })();
        forward(x: Tensor): Tensor {
          return this.proj.forward(x);
        }
      }
      const error = await rejectionOf(trainerFor(new Mismatch()).fit(blobDataset(32)));
      expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      // The first batch's first sample is checked in eval mode before training starts.
      expect(error.message).to.match(
        /^epoch 1, step 1: dataset samples of shape \[4\] do not fit the model: proj: matmul\(\[1, 4\] float32, \[3, 3\] float32\) failed at test\/modules\.test\.ts:\d+:\d+: /,
      );
    });

    it('names the op, shapes and source line of a view that does not fit (size inference throws a plain runtime_error)', async () => {
      class Viewing extends nn.Module {
        fc = nn.linear(3, 2);
        forward(x: Tensor): Tensor {
          return this.fc.forward(x.view(x.size(0), 3));
        }
      }
      const error = await rejectionOf(trainerFor(new Viewing()).fit(blobDataset(32)));
      expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      expect(error.message).to.match(
        /: view\(\[1, 4\] float32, 1\) failed at test\/modules\.test\.ts:\d+:\d+: shape '\[1, 3\]' is invalid for input of size 4$/,
      );
    });

    it('names the layer by its path when its input does not fit', async () => {
      class Wrong extends nn.Module {
        body = nn.sequential(nn.linear(4, 8), nn.relu(), nn.linear(5, 2));
        forward(x: Tensor): Tensor {
          return this.body.forward(x);
        }
      }
      const error = await rejectionOf(trainerFor(new Wrong()).fit(blobDataset(32)));
      expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      expect(error.message).to.contain(
        'body.2 (linear) cannot take an input of shape [1, 8] float32; it expects [*, 5] (inFeatures=5)',
      );
    });

    it('checks nn.init arguments and targets', () => {
      const layer = nn.linear(4, 2);
      expect(errorOf(() => nn.init.kaimingNormal_(layer.weight, { mode: 'fan_sideways' as never })).message).to.equal(
        "nn.init.kaimingNormal_.mode: got 'fan_sideways', expected one of 'fan_in', 'fan_out'",
      );
      class BadTarget extends nn.Module {
        fc: Layer = nn.linear(4, 2);
        constructor() {
          super();
          nn.init.zeros_(this.fc.tensor('running_mean'));
        }
        forward(x: Tensor): Tensor {
          return this.fc.forward(x);
        }
      }
      expect(errorOf(() => trainerFor(new BadTarget()).namedParameters).message).to.equal(
        "nn.init: fc has no tensor 'running_mean' (it has weight, bias)",
      );
    });
  });
});

describe('model.summary()', () => {
  it('lists each module call with its output shape and parameters, torchinfo-style', () => {
    const lines = new ResidualMlp(2).summary([3, 4]).split('\n');
    const rows = lines.slice(3, lines.indexOf(lines[0], 3)).map((line) => line.replace(/\s+/g, ' ').trim());
    expect(rows).to.deep.equal([
      'ResidualMlp [3, 2] 418',
      '├─inProj (MyLinear) [3, 16] 80',
      '├─block (Sequential) [3, 16] 272',
      '│ ├─0 (Linear) [3, 16] 272',
      '│ └─1 (GELU) [3, 16] 0',
      '├─block (Sequential) [3, 16] 272',
      '│ ├─0 (Linear) [3, 16] 272',
      '│ └─1 (GELU) [3, 16] 0',
      '├─norm (LayerNorm) [3, 16] 32',
      '└─head (Linear) [3, 2] 34',
    ]);
    expect(lines).to.include('Total params: 418');
  });
});
