// Batch order: a pure function of (seed, epoch), sharded as PyTorch's DistributedSampler
// (test/fixtures/golden-sampler.json, from torch.utils.data.DistributedSampler itself).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { Dataset } from '../src';
import { blobDataset, errorOf } from './support/helpers';

const golden = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'test', 'fixtures', 'golden-sampler.json'), 'utf8'),
);

describe('sampler', () => {
  const data = blobDataset(golden.size);

  it('gives each rank the indices DistributedSampler gives it, every epoch', () => {
    for (const [key, indices] of Object.entries(golden.shards as Record<string, number[]>)) {
      const [worldSize, rank, epoch] = key.split('/').map(Number);
      const order = data.batchOrder({ batchSize: 100, seed: golden.seed, epoch, rank, worldSize });
      expect(order.flat(), `worldSize ${worldSize}, rank ${rank}, epoch ${epoch}`).to.deep.equal(indices);
    }
    expect(data.batchOrder({ batchSize: 100, shuffle: false, rank: 2, worldSize: 3 }).flat()).to.deep.equal(
      golden.unshuffledRank2Of3,
    );
  });

  it('splits a dataset into the same train and validation samples as random_split', () => {
    for (const [key, expected] of Object.entries(golden.randomSplits as Record<string, number[][]>)) {
      const [size, fraction, seed] = key.split('/').map(Number);
      const indices = Dataset.fromArrays({
        inputs: new Float32Array(size).map((_, i) => i),
        inputShape: [size, 1],
        targets: new Int32Array(size).map((_, i) => i),
      });
      const parts = indices.split({ validation: fraction, seed });
      const byTrainShare = indices.split({ train: Number((1 - fraction).toFixed(12)), seed });
      expect(
        byTrainShare.map((part) => part.length),
        key,
      ).to.deep.equal(parts.map((part) => part.length));
      expect(
        parts.map((part) => Array.from(part.fields().target.data as Int32Array)),
        key,
      ).to.deep.equal(expected);
      expect(
        parts.map((part) => Array.from(part.fields().input.data as Float32Array)),
        key,
      ).to.deep.equal(expected);
    }
    expect(() => blobDataset(10).split({ validation: 1 })).to.throw('fraction must be between 0 and 1');
    expect(() => blobDataset(3).split({ validation: 0.1 })).to.throw('leaves one part empty');
    // The old bare number gave itself to validation; split(0.8) read as 80% training.
    const bare = errorOf(() => blobDataset(10).split(0.8 as never));
    expect(bare.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(bare.message).to.contain('split({ train: 0.8 }) or split({ validation: 0.8 })');
    expect(() => blobDataset(10).split({ train: 0.8, validation: 0.2 } as never)).to.throw(
      'exactly one of { train } and { validation }',
    );
  });

  it('cuts batches from the order, drops a short last batch on request, and is a pure function of (seed, epoch)', () => {
    const batches = data.batchOrder({ batchSize: 4, seed: 3, epoch: 2 });
    expect(batches.map((batch) => batch.length)).to.deep.equal([4, 4, 2]);
    expect(data.batchOrder({ batchSize: 4, seed: 3, epoch: 2, dropLast: true })).to.deep.equal(batches.slice(0, 2));
    expect(data.batchOrder({ batchSize: 4, seed: 3, epoch: 2 })).to.deep.equal(batches);
    expect(data.batchOrder({ batchSize: 4, seed: 3, epoch: 3 })).to.not.deep.equal(batches);
    expect(() => data.batchOrder({ rank: 3, worldSize: 3 })).to.throw('rank 3 must be in [0, worldSize)');
  });
});
