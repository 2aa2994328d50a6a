// Every layer against PyTorch's own
// (scripts/make-module-fixtures.py, test/fixtures/modules/layers.safetensors):
// the weights a seed draws, eval-mode outputs and train-mode gradients, within 1e-5.
import { expect } from 'chai';
import path from 'node:path';

import { Dataset, loadSafetensors, Module, nn, Trainer } from '../src';
import { expectClose } from './support/expect-close';
import { type Tensors, withPrefix } from './support/golden-tensors';

const fixture = path.join(__dirname, '..', '..', 'test', 'fixtures', 'modules', 'layers.safetensors');

// The same layers as LAYER_CASES in the script, in the same order (the seed is the index).
const cases: Record<string, () => Module> = {
  conv1d: () => nn.conv1d(3, 4, 3, { stride: 2, padding: 1 }),
  conv3d: () => nn.conv3d(2, 3, [1, 2, 2], { padding: [0, 1, 1] }),
  convTranspose1d: () => nn.convTranspose1d(3, 2, 3, { stride: 2, outputPadding: 1 }),
  convTranspose2d: () => nn.convTranspose2d(4, 2, 2, { stride: 2, bias: false }),
  maxPool1d: () => nn.maxPool1d(2),
  avgPool1d: () => nn.avgPool1d(3, { stride: 2, padding: 1 }),
  adaptiveAvgPool1d: () => nn.adaptiveAvgPool1d(3),
  adaptiveAvgPool2d: () => nn.adaptiveAvgPool2d([2, 3]),
  adaptiveMaxPool2d: () => nn.adaptiveMaxPool2d(2),
  batchNorm3d: () => nn.batchNorm3d(2),
  groupNorm: () => nn.groupNorm(2, 4),
  instanceNorm2d: () => nn.instanceNorm2d(3, { affine: true }),
  rmsNorm: () => nn.rmsNorm(6),
  dropout2d: () => nn.dropout2d(0.3),
  identity: () => nn.identity(),
  upsampleNearest: () => nn.upsample({ scaleFactor: 2, mode: 'nearest' }),
  upsampleBilinear: () => nn.upsample({ size: [5, 7], mode: 'bilinear', alignCorners: true }),
  pixelShuffle: () => nn.pixelShuffle(2),
  unflatten: () => nn.unflatten(1, [2, 6]),
  leakyRelu: () => nn.leakyRelu(0.2),
  elu: () => nn.elu(0.5),
  silu: () => nn.silu(),
  mish: () => nn.mish(),
  softplus: () => nn.softplus(2, 10),
  hardswish: () => nn.hardswish(),
  prelu: () => nn.prelu(3),
  relu6: () => nn.relu6(),
  hardsigmoid: () => nn.hardsigmoid(),
  hardtanh: () => nn.hardtanh(-0.5, 0.5),
};

describe('layers against PyTorch', () => {
  let golden: Tensors;
  let order: string[];
  before(async () => {
    const contents = await loadSafetensors(fixture);
    golden = contents.tensors;
    order = JSON.parse(contents.metadata.cases) as string[];
  });

  it('covers the same cases as the fixture, in its order', () => {
    expect(Object.keys(cases)).to.deep.equal(order);
  });

  for (const [index, [name, build]] of Object.entries(cases).entries()) {
    it(`${name}: seeded weights, eval output and gradients`, async () => {
      const input = golden[`${name}.input`];
      const config = {
        progressBar: false,
        numThreads: 1,
        seed: index,
        numEpochs: 1,
        shuffle: false,
        batchSize: input.shape[0],
      };
      const trainer = new Trainer({
        model: nn.sequential(build()),
        loss: 'mse',
        optimizer: { name: 'sgd', lr: 1 },
        config,
      });
      const initial = withPrefix(golden, `${name}.initial.`);
      const state = await trainer.stateDict();
      // The file's keys are sorted (safetensors); the state dict is in PyTorch's order (modules.test.ts).
      expect(Object.keys(state).sort(), 'state-dict keys').to.deep.equal(Object.keys(initial).sort());
      for (const key of Object.keys(initial)) expectClose(state[key], initial[key], `seeded ${key}`);

      const expected = golden[`${name}.eval_output`];
      expectClose(await trainer.predict(input.data, input.shape), expected, 'eval output');

      const grads = withPrefix(golden, `${name}.grad.`);
      if (Object.keys(grads).length === 0) return;
      const data = Dataset.fromFields({
        input: { data: input.data, shape: input.shape },
        target: { data: new Float32Array(expected.data.length), shape: expected.shape },
      });
      await trainer.fit(data);
      const after = await trainer.stateDict();
      for (const [parameter, grad] of Object.entries(grads)) {
        const moved = Float64Array.from(
          initial[parameter].data as Float32Array,
          (value, i) => value - Number(after[parameter].data[i]),
        );
        expectClose({ shape: grad.shape, data: moved }, grad, `gradient of ${parameter}`);
      }
    });
  }
});
