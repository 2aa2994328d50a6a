// Batch order: a pure function of (seed, epoch), sharded as PyTorch's DistributedSampler
// (test/fixtures/golden-sampler.json, from torch.utils.data.DistributedSampler itself).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { Dataset, Table } from '../src';
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

  it('names its parts, and splits by label (stratify) or keeps groups together, each part in the dataset order', () => {
    const size = 60;
    const labels = Int32Array.from({ length: size }, (_, i) => (i % 10 < 7 ? 0 : i % 10 < 9 ? 1 : 2));
    const data = Dataset.fromArrays({
      inputs: Float32Array.from({ length: size }, (_, i) => i),
      inputShape: [size, 1],
      targets: labels,
    });
    const { train, validation } = data.split({ validation: 0.5, seed: 5, stratify: 'target' });
    const sampleIds = (part: Dataset) => Array.from(part.fields().input.data as Float32Array);
    for (const label of [0, 1, 2]) {
      const held = sampleIds(validation).filter((id) => labels[id] === label).length;
      const all = labels.filter((value) => value === label).length;
      expect(held, `label ${label}`).to.equal(all / 2);
    }
    expect(sampleIds(train)).to.deep.equal([...sampleIds(train)].sort((a, b) => a - b));
    expect([...sampleIds(train), ...sampleIds(validation)].sort((a, b) => a - b)).to.deep.equal(
      Array.from({ length: size }, (_, i) => i),
    );
    // The same split as a table's stratified split of the same labels.
    const table = Table.fromRecords(Array.from(labels, (label) => ({ label })));
    const tableParts = table.split({ validation: 0.5, seed: 5, stratify: 'label' });
    expect(tableParts.validation.numRows).to.equal(validation.length);

    const patients = Array.from({ length: size }, (_, i) => `patient-${i % 12}`);
    const grouped = data.split({ validation: 0.25, seed: 2, groups: patients });
    const groupsOf = (part: Dataset) => new Set(sampleIds(part).map((id) => patients[id]));
    const [trainGroups, validationGroups] = [groupsOf(grouped.train), groupsOf(grouped.validation)];
    expect([...trainGroups].filter((group) => validationGroups.has(group))).to.deep.equal([]);
    expect(validationGroups.size).to.equal(3);
    const [first, second] = grouped;
    expect(first).to.equal(grouped.train);
    expect(second).to.equal(grouped.validation);

    expect(() => data.split({ validation: 0.2, stratify: 'label' })).to.throw("'label' is not a field");
    expect(() => data.split({ validation: 0.2, groups: [1, 2] })).to.throw('2 values for 60 samples');
    expect(() => data.split({ validation: 0.2, stratify: 'target', groups: 'target' })).to.throw('not both');
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
    expect(() => blobDataset(10).split({ validation: 1 })).to.throw(
      'split: validation must be a fraction between 0 and 1 (exclusive), got 1',
    );
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
