// Weight tying between modules, as PyTorch has it: `head.weight = embed.weight`
// makes one tensor that both use and train. named_parameters lists it once (under
// its first name); the state dict holds it under both names.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, F, Model, ModelLike, nn, Parameter, saveSafetensors, Tensor, Trainer } from '../src';
import { errorOf, rejectionOf } from './support/helpers';

/** Tokens to next-token logits, the head tied to the embedding (GPT-2's direction). */
class TiedHead extends nn.Module {
  embed = nn.embedding(10, 6);
  hidden = nn.linear(6, 6);
  head = nn.linear(6, 10, { bias: false });

  constructor() {
    super();
    this.head.weight = this.embed.weight;
  }

  forward(tokens: Tensor): Tensor {
    return this.head.forward(F.relu(this.hidden.forward(this.embed.forward(tokens)))).transpose(1, 2);
  }
}

/** Two modules of one's own sharing a Parameter field. */
class Scale extends nn.Module {
  gain = new nn.Parameter([4]);
  constructor() {
    super();
    nn.init.ones_(this.gain);
  }
  forward(x: Tensor): Tensor {
    return x.mul(this.gain);
  }
}
class SharedGain extends nn.Module {
  first = new Scale();
  second = new Scale();
  head = nn.linear(4, 2);
  constructor() {
    super();
    this.second.gain = this.first.gain;
  }
  forward(x: Tensor): Tensor {
    return this.head.forward(F.relu(this.second.forward(this.first.forward(x))));
  }
}

function tokens(samples: number, seed: number): Dataset {
  const input = BigInt64Array.from({ length: samples * 5 }, (_, i) => BigInt((i * 7 + seed) % 10));
  const target = BigInt64Array.from({ length: samples * 5 }, (_, i) => BigInt((i * 7 + seed + 1) % 10));
  return Dataset.fromFields({
    input: { data: input, shape: [samples, 5] },
    target: { data: target, shape: [samples, 5] },
  });
}

const config = { numEpochs: 2, batchSize: 8, progressBar: false, numThreads: 1 };
const trainerFor = (model: ModelLike, loss: 'cross_entropy' | 'mse' = 'cross_entropy') =>
  new Trainer({ model, loss, optimizer: { name: 'adamw', lr: 0.05 }, config });

describe('weight tying between modules', () => {
  it('lists a tied tensor once among the parameters, and under both names in the state dict', async () => {
    const trainer = trainerFor(new TiedHead());
    expect(trainer.namedParameters.map(({ name }) => name)).to.deep.equal([
      'embed.weight',
      'hidden.weight',
      'hidden.bias',
    ]);
    expect(trainer.parameterCount).to.equal(60 + 36 + 6);
    const before = await trainer.stateDict();
    expect(Object.keys(before).sort()).to.deep.equal(['embed.weight', 'head.weight', 'hidden.bias', 'hidden.weight']);
    expect(before['head.weight'].data).to.deep.equal(before['embed.weight'].data);

    const history = await trainer.fit(tokens(32, 1));
    expect(history.epochs[1].loss).to.be.below(history.epochs[0].loss);
    const after = await trainer.stateDict();
    expect(after['head.weight'].data).to.deep.equal(after['embed.weight'].data);
    expect(after['embed.weight'].data).to.not.deep.equal(before['embed.weight'].data);
  });

  it('ties Parameter fields of modules of your own', async () => {
    const trainer = trainerFor(new SharedGain());
    expect(trainer.namedParameters.map(({ name }) => name)).to.deep.equal(['first.gain', 'head.weight', 'head.bias']);
    const { inputs, shape } = { inputs: Float32Array.from({ length: 64 }, (_, i) => Math.sin(i)), shape: [16, 4] };
    const data = Dataset.fromArrays({
      inputs,
      inputShape: shape,
      targets: Int32Array.from({ length: 16 }, (_, i) => i % 2),
    });
    await trainer.fit(data);
    const state = await trainer.stateDict();
    expect(state['second.gain'].data).to.deep.equal(state['first.gain'].data);
    expect(state['first.gain'].data).to.not.deep.equal(Float32Array.of(1, 1, 1, 1));
  });

  it("keeps PyTorch's state-dict order when a tied field comes before the module's own (weight, then bias)", async () => {
    class Projection extends nn.Module {
      weight = new nn.Parameter([4, 4]);
      bias = new nn.Parameter([4]);
      forward(x: Tensor): Tensor {
        return x.matmul(this.weight.transpose(0, 1)).add(this.bias);
      }
    }
    class Siamese extends nn.Module {
      query = new Projection();
      key = new Projection();
      constructor() {
        super();
        this.key.weight = this.query.weight;
      }
      forward(x: Tensor): Tensor {
        return this.query.forward(x).add(this.key.forward(x));
      }
    }
    const trainer = trainerFor(new Siamese());
    expect(Object.keys(await trainer.stateDict())).to.deep.equal([
      'query.weight',
      'query.bias',
      'key.weight',
      'key.bias',
    ]);
  });

  it('saves, loads and exports the tie: Model.load, weights with or without the second name, TorchScript', async () => {
    const trainer = trainerFor(new TiedHead());
    await trainer.fit(tokens(32, 1));
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-ties-'));
    try {
      const probe = BigInt64Array.from({ length: 10 }, (_, i) => BigInt(i));
      const expected = await trainer.predict(probe, [2, 5]);
      await trainer.save(path.join(folder, 'model'));
      const loaded = await Model.load(path.join(folder, 'model'));
      expect((await loaded.predict(probe, [2, 5])).data).to.deep.equal(expected.data);

      // Weights saved the way safetensors' save_model does: the tied tensor under its first name only.
      const state = await trainer.stateDict();
      const { ['head.weight']: _tied, ...deduplicated } = state;
      await saveSafetensors(path.join(folder, 'first-names.safetensors'), deduplicated);
      const fresh = trainerFor(new TiedHead());
      await fresh.initWeightsFrom(path.join(folder, 'first-names.safetensors'));
      expect((await fresh.predict(probe, [2, 5])).data).to.deep.equal(expected.data);

      // Both names holding different values: PyTorch would keep one silently; this names them.
      const differing = {
        ...state,
        'head.weight': {
          ...state['head.weight'],
          data: (state['head.weight'].data as Float32Array).map((value) => value + 1),
        },
      };
      await saveSafetensors(path.join(folder, 'differing.safetensors'), differing);
      for (const strict of [true, false]) {
        const refusal = await rejectionOf(
          trainerFor(new TiedHead()).initWeightsFrom(path.join(folder, 'differing.safetensors'), { strict }),
        );
        expect(refusal.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
        expect(refusal.message).to.contain(
          "weights 'embed.weight' and 'head.weight' are one tied tensor in the model, but the file holds different values",
        );
      }

      await trainer.exportTorchScript(path.join(folder, 'model.pt'));
      const scripted = trainerFor(nn.torchScript(path.join(folder, 'model.pt')));
      expect(scripted.parameterCount, 'the tied tensor is one attribute').to.equal(trainer.parameterCount);
      // TorchScript runs the layers one by one, as optimizeForInference: false does: bit for bit.
      const layerByLayer = await trainer.predict(probe, [2, 5], { optimizeForInference: false });
      expect((await scripted.predict(probe, [2, 5])).data).to.deep.equal(layerByLayer.data);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  describe('errors', () => {
    it('names both shapes when the tied tensor does not fit the layer', async () => {
      class Misfit extends nn.Module {
        embed = nn.embedding(10, 6);
        head = nn.linear(6, 12, { bias: false });
        constructor() {
          super();
          this.head.weight = this.embed.weight;
        }
        forward(tokens: Tensor): Tensor {
          return this.head.forward(this.embed.forward(tokens));
        }
      }
      const error = await rejectionOf(trainerFor(new Misfit()).setup());
      expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      expect(error.message).to.contain(
        "head (linear): weight tied to 'embed.weight': that tensor is [10, 6] float32, the layer's weight is [12, 6] float32",
      );
    });

    it('refuses a bias the layer does not have, a layer type that cannot be tied, and a value that is not a parameter', async () => {
      class NoBias extends nn.Module {
        a = nn.linear(4, 4);
        b = nn.linear(4, 4, { bias: false });
        constructor() {
          super();
          this.b.bias = this.a.bias;
        }
        forward(x: Tensor): Tensor {
          return this.b.forward(this.a.forward(x));
        }
      }
      expect((await rejectionOf(trainerFor(new NoBias(), 'mse').setup())).message).to.contain(
        "b (linear): bias tied to 'a.bias': the layer has no bias",
      );
      class Norms extends nn.Module {
        a = nn.batchNorm1d(4);
        b = nn.batchNorm1d(4);
        constructor() {
          super();
          this.b.weight = this.a.weight;
        }
        forward(x: Tensor): Tensor {
          return this.b.forward(this.a.forward(x));
        }
      }
      expect((await rejectionOf(trainerFor(new Norms(), 'mse').setup())).message).to.contain(
        "b (batchNorm1d): weight tied to 'a.weight': weight tying works for linear, embedding, convolution and layerNorm layers",
      );
      const layer = nn.linear(4, 4);
      const wrong = errorOf(() => {
        layer.weight = 3 as unknown as Parameter;
      });
      expect(wrong.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(wrong.message).to.equal(
        "Linear.weight = ...: expected a parameter to tie (another layer's weight, or an nn.Parameter), got number",
      );
    });

    it('refuses a tie to a tensor outside the model', () => {
      const stray = nn.linear(4, 4);
      class Outside extends nn.Module {
        fc = nn.linear(4, 4);
        constructor() {
          super();
          this.fc.weight = stray.weight;
        }
        forward(x: Tensor): Tensor {
          return this.fc.forward(x);
        }
      }
      const error = errorOf(() => trainerFor(new Outside(), 'mse').namedParameters);
      expect(error.message).to.equal(
        "fc.weight: holds a tensor that is not part of the model (its layer or module is no field of the model's modules)",
      );
    });
  });
});
