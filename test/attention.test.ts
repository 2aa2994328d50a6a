// Attention in models written as TypeScript modules (F.scaledDotProductAttention,
// nn.multiheadAttention, the transformer layers), beyond the golden parity of
// test/modules-golden.test.ts: they learn, export to TorchScript that Python and
// C++ run to the same outputs, and a mask that does not fit is named with its
// shape before training starts.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, F, nn, NumericArray, Tensor, TensorData, torch, Trainer } from '../src';
import { blobDataset, pythonJson, rejectionOf } from './support/helpers';
import { AttentionClassifier } from './models/attention';
import { TransformerModel } from './models/transformer';
import { GPTMini } from '../examples/models/gpt';

/** Sequences that count up by 3 (mod 16): the next token is always predictable. */
function counting(samples: number): Dataset {
  const input = BigInt64Array.from({ length: samples * 8 }, (_, i) => BigInt((Math.floor(i / 8) + 3 * (i % 8)) % 16));
  const target = input.map((token) => (token + 3n) % 16n);
  return Dataset.fromFields({
    input: { data: input, shape: [samples, 8] },
    target: { data: target, shape: [samples, 8] },
  });
}

const config = { progressBar: false, numThreads: 1, batchSize: 8 };

describe('attention in modules', () => {
  it('trains a GPT on next-token prediction: the loss falls well below chance', async () => {
    const trainer = new Trainer({
      model: new GPTMini(),
      loss: 'cross_entropy',
      optimizer: { name: 'adamw', lr: 3e-3 },
      config: { ...config, numEpochs: 12 },
    });
    const history = await trainer.fit(counting(64));
    expect(history.epochs[0].loss).to.be.above(2);
    expect(history.epochs[11].loss).to.be.below(0.5 * Math.log(16));
  });

  it('exports a GPT that torch.jit.load runs to the same outputs, in C++ and in Python', async function () {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-gpt-'));
    try {
      const trainer = new Trainer({ model: new GPTMini(), loss: 'cross_entropy', optimizer: 'adamw', config });
      const file = path.join(folder, 'gpt.pt');
      await trainer.exportTorchScript(file);
      const tokens = BigInt64Array.from({ length: 12 }, (_, i) => BigInt((i * 5) % 16));
      // The script runs attention's formula op by op, as predict does with optimizeForInference off.
      const expected = await trainer.predict(tokens, [2, 6], { optimizeForInference: false });
      const reloaded = new Trainer({ model: nn.torchScript(file), loss: 'cross_entropy', optimizer: 'sgd', config });
      expect(reloaded.parameterCount).to.equal(trainer.parameterCount);
      const actual: TensorData = await reloaded.predict(tokens, [2, 6]);
      expect(actual.data).to.deep.equal(expected.data);
      const script = `import json, sys, torch
m = torch.jit.load(sys.argv[1]).eval()
x = torch.tensor(json.loads(sys.argv[2])).reshape(2, 6)
print(json.dumps(m(x).flatten().tolist()))`;
      const python = pythonJson(this, script, file, JSON.stringify(Array.from(tokens, Number))) as number[];
      python.forEach((value, i) => expect(value).to.be.closeTo(expected.data[i], 1e-6));
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('exports nn.multiheadAttention (masks, both layouts, weights) that torch.jit.load runs to the same outputs', async function () {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-mha-'));
    try {
      const trainer = new Trainer({
        model: new AttentionClassifier(),
        loss: 'cross_entropy',
        optimizer: 'adamw',
        config,
      });
      const file = path.join(folder, 'attention.pt');
      await trainer.exportTorchScript(file);
      const tokens = BigInt64Array.from({ length: 12 }, (_, i) => BigInt((i * 7) % 12));
      const expected = await trainer.predict(tokens, [2, 6]);
      const reloaded = new Trainer({ model: nn.torchScript(file), loss: 'cross_entropy', optimizer: 'sgd', config });
      expect(reloaded.parameterCount).to.equal(trainer.parameterCount);
      const actual: TensorData = await reloaded.predict(tokens, [2, 6]);
      actual.data.forEach((value, i) => expect(value).to.be.closeTo(expected.data[i], 1e-6));
      const script = `import json, sys, torch
m = torch.jit.load(sys.argv[1]).eval()
print(json.dumps(m(torch.tensor(json.loads(sys.argv[2])).reshape(2, 6)).flatten().tolist()))`;
      const python = pythonJson(this, script, file, JSON.stringify(Array.from(tokens, Number))) as number[];
      python.forEach((value, i) => expect(value).to.be.closeTo(expected.data[i], 1e-6));
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("builds nn.transformerEncoder's layers as copies of one (PyTorch's deep copies) that then train apart, and exports them", async function () {
    const trainer = new Trainer({
      model: new TransformerModel(),
      loss: 'cross_entropy',
      optimizer: { name: 'adamw', lr: 1e-2 },
      config,
    });
    const layerOf = (state: Record<string, TensorData<NumericArray>>, index: number) =>
      Object.entries(state)
        .filter(([name]) => name.startsWith(`encoder.layers.${index}.`))
        .map(([name, tensor]) => [name.replace(`.${index}.`, '.#.'), Array.from(tensor.data as Float32Array)]);
    const initial = await trainer.stateDict();
    expect(layerOf(initial, 1)).to.deep.equal(layerOf(initial, 0));
    expect(layerOf(initial, 0)).to.have.length(12);
    const tokens = BigInt64Array.from({ length: 48 }, (_, i) => BigInt(1 + ((i * 5) % 11)));
    await trainer.fit(
      Dataset.fromFields({
        input: { data: tokens, shape: [8, 6] },
        target: { data: Int32Array.from({ length: 8 }, (_, i) => i % 3), shape: [8] },
      }),
    );
    const trained = await trainer.stateDict();
    expect(layerOf(trained, 1)).to.not.deep.equal(layerOf(trained, 0));

    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-transformer-'));
    try {
      const file = path.join(folder, 'transformer.pt');
      await trainer.exportTorchScript(file);
      const probe = tokens.slice(0, 12);
      const expected = await trainer.predict(probe, [2, 6]);
      const script = `import json, sys, torch
m = torch.jit.load(sys.argv[1]).eval()
print(json.dumps(m(torch.tensor(json.loads(sys.argv[2])).reshape(2, 6)).flatten().tolist()))`;
      const python = pythonJson(this, script, file, JSON.stringify(Array.from(probe, Number))) as number[];
      python.forEach((value, i) => expect(value).to.be.closeTo(expected.data[i], 1e-6));
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("masks causally with isCausal exactly as with an explicit mask, and returns weights of PyTorch's shapes", async () => {
    class Both extends nn.Module {
      attn = nn.multiheadAttention(4, 2, { batchFirst: true });
      forward(x: Tensor): Record<string, Tensor> {
        const seq = x.view(x.size(0), 2, 2).repeat(1, 1, 2);
        const length = seq.size(1);
        const [implicit, averaged] = this.attn.forward(seq, seq, seq, { isCausal: true, needWeights: true });
        const [explicit, perHead] = this.attn.forward(seq, seq, seq, {
          attnMask: torch.full([length, length], 1, 'bool').triu(1),
          needWeights: true,
          averageAttnWeights: false,
        });
        return { implicit, explicit, averaged: averaged!, perHead: perHead! };
      }
    }
    const trainer = new Trainer({ model: new Both(), loss: 'mse', optimizer: 'sgd', config });
    const outputs = await trainer.predict<Record<string, TensorData>>(
      Float32Array.from({ length: 12 }, (_, i) => Math.cos(i)),
      [3, 4],
    );
    expect(outputs.implicit.data).to.deep.equal(outputs.explicit.data);
    expect(outputs.averaged.shape).to.deep.equal([3, 2, 2]);
    expect(outputs.perHead.shape).to.deep.equal([3, 2, 2, 2]);
    expect(outputs.averaged.data[1], 'the first query cannot see the second key').to.equal(0);
  });

  it('names the module, the shapes and the source line when a mask does not fit, before the first step', async () => {
    class Masked extends nn.Module {
      proj = nn.linear(4, 4);
      mask = new nn.Buffer([3, 3], { dtype: 'bool', fill: 1 });
      forward(x: Tensor): Tensor {
        const q = this.proj.forward(x).view(x.size(0), 2, 2);
        return F.scaledDotProductAttention(q, q, q, { attnMask: this.mask }).flatten(1);
      }
    }
    const error = await rejectionOf(
      new Trainer({ model: new Masked(), loss: 'cross_entropy', optimizer: 'sgd', config }).fit(blobDataset(16)),
    );
    expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(error.message).to.match(
      /: scaledDotProductAttention\(\[1, 2, 2\] float32, \[1, 2, 2\] float32, \[1, 2, 2\] float32, \[3, 3\] bool\) failed at test\/attention\.test\.ts:\d+:\d+: /,
    );
  });

  it('names the attention layer and every shape when a key padding mask does not fit; checks embedDim against numHeads', async () => {
    class Padded extends nn.Module {
      attn = nn.multiheadAttention(4, 2, { batchFirst: true });
      forward(x: Tensor): Tensor {
        const seq = x.view(x.size(0), 1, 4);
        return this.attn.forward(seq, seq, seq, { keyPaddingMask: torch.full([1, 3], 0, 'bool') })[0].flatten(1);
      }
    }
    const error = await rejectionOf(
      new Trainer({ model: new Padded(), loss: 'mse', optimizer: 'sgd', config }).fit(blobDataset(16)),
    );
    expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(error.message).to.contain(
      'attn (multiheadAttention) cannot take query [1, 1, 4] float32, key [1, 1, 4] float32, value [1, 1, 4] float32, keyPaddingMask [1, 3] bool; it expects [N, L, 4] or [L, 4] (embedDim=4)',
    );
    class Uneven extends nn.Module {
      attn = nn.multiheadAttention(6, 4);
      forward(x: Tensor): Tensor {
        return this.attn.forward(x, x, x)[0];
      }
    }
    const uneven = await rejectionOf(
      new Trainer({ model: new Uneven(), loss: 'mse', optimizer: 'sgd', config }).setup(),
    );
    expect(uneven.message).to.contain('attn (multiheadAttention): embedDim (6) must be divisible by numHeads (4)');
    expect(() => nn.transformerEncoderLayer(8, 2, { activation: 'tanh' as never })).to.throw(
      "nn.transformerEncoderLayer.activation: got \"tanh\", expected one of 'relu', 'gelu'",
    );
  });
});
