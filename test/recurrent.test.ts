// nn.lstm, nn.gru and nn.rnn in TypeScript modules, beyond the golden parity of
// test/modules-golden.test.ts: TorchScript export run by Python and by C++,
// and errors that name the layer, the shapes and what it takes.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, ModelLike, nn, Tensor, TensorData, torch, Trainer } from '../src';
import { blobDataset, errorOf, pythonJson, rejectionOf } from './support/helpers';
import { GRURegressor, LSTMClassifier, PackedRecurrent } from './models/recurrent';

const config = { progressBar: false, numThreads: 1, batchSize: 4 };
const trainerFor = (model: ModelLike) => new Trainer({ model, loss: 'cross_entropy', optimizer: 'adamw', config });
const tokens = { data: BigInt64Array.from({ length: 14 }, (_, i) => BigInt((i * 5) % 12)), shape: [2, 7] };
const series = { data: Float32Array.from({ length: 60 }, (_, i) => Math.sin(i * 0.7)), shape: [2, 6, 5] };

describe('recurrent layers in modules', () => {
  describe('TorchScript export', () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-recurrent-'));
    after(() => fs.rmSync(folder, { recursive: true, force: true }));

    for (const [name, build, input] of [
      ['an embedding and a bidirectional 2-layer LSTM', () => new LSTMClassifier(), tokens],
      ['a GRU from an initial state and a relu RNN', () => new GRURegressor(), series],
      // Lengths 7 and 5 (from each sequence's first token): packed, unsorted, as pack_padded_sequence packs them.
      ['a bidirectional LSTM and a GRU over sequences of their own lengths', () => new PackedRecurrent(), tokens],
    ] as const) {
      it(`exports ${name} that torch.jit.load runs to the same outputs, in C++ and in Python`, async function () {
        const trainer = trainerFor(build());
        const file = path.join(folder, `${name.replace(/\W+/g, '-')}.pt`);
        await trainer.exportTorchScript(file);
        const expected = await trainer.predict(input.data, input.shape);
        const reloaded = new Trainer({ model: nn.torchScript(file), loss: 'cross_entropy', optimizer: 'sgd', config });
        expect(reloaded.parameterCount).to.equal(trainer.parameterCount);
        // TorchScript runs aten's fused torch.gru/lstm, the module its own: equal to float rounding (2.14 differs in the last bit).
        const actual: TensorData = await reloaded.predict(input.data, input.shape);
        actual.data.forEach((value, i) => expect(value).to.be.closeTo(expected.data[i], 1e-6));

        const script = `import json, sys, torch
m = torch.jit.load(sys.argv[1]).eval()
x = torch.tensor(json.loads(sys.argv[2])).reshape(json.loads(sys.argv[3]))
print(json.dumps(m(x).flatten().tolist()))`;
        const values = Array.from(input.data as ArrayLike<number | bigint>, Number);
        const python = pythonJson(this, script, file, JSON.stringify(values), JSON.stringify(input.shape)) as number[];
        python.forEach((value, i) => expect(value).to.be.closeTo(expected.data[i], 1e-6));
      });
    }
  });

  describe('errors', () => {
    it('names the layer, both shapes and what it takes when an input does not fit', async () => {
      class Narrow extends nn.Module {
        gru = nn.gru(4, 3, { batchFirst: true });
        forward(x: Tensor): Tensor {
          const [out] = this.gru.forward(x.unsqueeze(1));
          return out.flatten(1);
        }
      }
      const error = await rejectionOf(trainerFor(new Narrow()).fit(blobDataset(8, 6)));
      expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      expect(error.message).to.contain(
        'gru (gru) cannot take an input of shape [1, 1, 6] float32; it expects [N, L, 4] or [L, 4] (inputSize=4, batchFirst)',
      );
    });

    it('names the initial state when its shape does not fit', async () => {
      class WrongState extends nn.Module {
        lstm = nn.lstm(4, 3);
        forward(x: Tensor): Tensor {
          const h0 = torch.full([2, 1, 3], 0);
          const [out] = this.lstm.forward(x.unsqueeze(0), [h0, h0]);
          return out.squeeze(0);
        }
      }
      const error = await rejectionOf(trainerFor(new WrongState()).fit(blobDataset(8, 4)));
      expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      expect(error.message).to.contain(
        'lstm (lstm) cannot take an input of shape [1, 1, 4] float32 with initial state [2, 1, 3] float32',
      );
    });

    it('names lengths of the wrong shape or past the input, and a token past the embedding table', async () => {
      class Lengths extends nn.Module {
        embed = nn.embedding(12, 4);
        gru = nn.gru(4, 3, { batchFirst: true });
        constructor(private readonly lengthsOf: (tokens: Tensor) => Tensor) {
          super();
        }
        forward(tokens: Tensor): Tensor {
          return this.gru
            .forward(this.embed.forward(tokens), null, { lengths: this.lengthsOf(tokens) })[1]
            .select(0, 0);
        }
      }
      const tokens = (ids: number[]) =>
        Dataset.fromFields({
          input: { data: BigInt64Array.from(ids, BigInt), shape: [ids.length / 4, 4] },
          target: { data: Int32Array.from({ length: ids.length / 4 }, (_, i) => i % 3), shape: [ids.length / 4] },
        });
      const fit = (lengthsOf: (tokens: Tensor) => Tensor, ids = [1, 2, 3, 4, 5, 6, 7, 8]) =>
        rejectionOf(trainerFor(new Lengths(lengthsOf)).fit(tokens(ids)));
      const shape = await fit((t) => t.sum(1, true));
      expect(shape.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      expect(shape.message).to.contain(
        'gru (gru): lengths must hold one length per sequence of the batch; got lengths [1, 1] int64 for an input of [1, 4, 4] float32',
      );
      const long = await fit((t) => t.select(1, 0).add(8));
      expect(long.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(long.message).to.contain("gru (gru): lengths must be in [1, 4] (the input's steps); got 9");
      const past = await fit((t) => t.select(1, 0), [1, 2, 3, 4, 5, 6, 7, 12]);
      expect(past.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(past.message).to.contain(
        'embed (embedding): index 12 in its input [2, 4] int64 is outside [0, 11] (numEmbeddings=12)',
      );
    });

    it('refuses a recurrent layer in a sequential model, and a projSize not below hiddenSize', async () => {
      const spec = {
        type: 'sequential' as const,
        layers: [
          { type: 'linear', inFeatures: 4, outFeatures: 4 },
          { type: 'gru', inputSize: 4, hiddenSize: 2 },
        ],
      };
      const sequential = errorOf(() => trainerFor(spec as ModelLike).namedParameters);
      expect(sequential.message).to.equal(
        "layers[1] (gru) takes or returns several tensors, which a sequential model cannot pass on; use it in a module's forward (const [out, h] = this.rnn.forward(x))",
      );
      const modules = errorOf(() => trainerFor(nn.sequential(nn.linear(4, 4), nn.lstm(4, 2))).namedParameters);
      expect(modules.message).to.equal(
        'nn.sequential: module 1 (LSTM) returned several outputs; a Sequential hands one tensor from module to module',
      );
      class Projected extends nn.Module {
        lstm = nn.lstm(4, 3, { projSize: 3 });
        forward(x: Tensor): Tensor {
          return this.lstm.forward(x)[0];
        }
      }
      const projected = await rejectionOf(trainerFor(new Projected()).setup());
      expect(projected.message).to.contain('lstm (lstm): projSize (3) must be smaller than hiddenSize (3)');
    });
  });
});
