// Batch order: a pure function of (seed, epoch), sharded as PyTorch's DistributedSampler
// (test/fixtures/golden-sampler.json, from torch.utils.data.DistributedSampler itself).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { blobDataset } from './helpers';

const golden = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'test', 'fixtures', 'golden-sampler.json'), 'utf8'));

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

  it('cuts batches from the order, drops a short last batch on request, and is a pure function of (seed, epoch)', () => {
    const batches = data.batchOrder({ batchSize: 4, seed: 3, epoch: 2 });
    expect(batches.map((batch) => batch.length)).to.deep.equal([4, 4, 2]);
    expect(data.batchOrder({ batchSize: 4, seed: 3, epoch: 2, dropLast: true })).to.deep.equal(batches.slice(0, 2));
    expect(data.batchOrder({ batchSize: 4, seed: 3, epoch: 2 })).to.deep.equal(batches);
    expect(data.batchOrder({ batchSize: 4, seed: 3, epoch: 3 })).to.not.deep.equal(batches);
    expect(() => data.batchOrder({ rank: 3, worldSize: 3 })).to.throw('rank 3 must be in [0, worldSize)');
  });
});
