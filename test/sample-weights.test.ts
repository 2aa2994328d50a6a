// Dataset.withSampleWeights: each training epoch drawn as
// torch.utils.data.WeightedRandomSampler draws it (compared live with the
// python3-torch of this machine, the same libtorch: its multinomial may differ
// between versions), 'balanced' weights from the targets, the loader and fit
// drawing the same, evaluation untouched, and bad weights refused.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';

import { Dataset, nn, Trainer } from '../src';
import { errorOf } from './support/helpers';

const python = process.env.BENCH_PYTHON ?? '/usr/bin/python3';

interface Draw {
  weights: number[];
  numSamples: number;
  replacement: boolean;
  seed: number;
  epoch: number;
}

/** torch's WeightedRandomSampler's indices for each case, its generator seeded seed + epoch. */
function torchDraws(cases: Draw[]): number[][] | undefined {
  const script = `
import json, sys, torch
from torch.utils.data import WeightedRandomSampler
out = []
for case in json.loads(sys.argv[1]):
    generator = torch.Generator()
    generator.manual_seed(case["seed"] + case["epoch"])
    out.append(list(WeightedRandomSampler(case["weights"], case["numSamples"], case["replacement"], generator=generator)))
print(json.dumps(out))`;
  const result = spawnSync(python, ['-c', script, JSON.stringify(cases)], { encoding: 'utf8' });
  if (result.status !== 0) {
    console.log(`      (no live check against torch: ${python}: ${result.stderr.trim().split('\n').at(-1)})`);
    return undefined;
  }
  return JSON.parse(result.stdout) as number[][];
}

function labelled(labels: number[]): Dataset {
  return Dataset.fromArrays({
    inputs: Float32Array.from(labels, (_, i) => i),
    inputShape: [labels.length, 1],
    targets: Int32Array.from(labels),
  });
}

describe('Dataset.withSampleWeights: epochs drawn as WeightedRandomSampler draws them', () => {
  it("draws torch's indices, with and without replacement, and 'balanced' weights from the targets", function () {
    const labels = [0, 0, 0, 0, 1, 1, 2, 0, 1, 0];
    const weights = [0.1, 0, 5, 1, 1, 2.5, 0.3, 0, 1, 1];
    const counts = [6, 3, 1];
    const cases: Draw[] = [
      { weights, numSamples: 25, replacement: true, seed: 42, epoch: 0 },
      { weights, numSamples: 25, replacement: true, seed: 42, epoch: 3 },
      { weights, numSamples: 6, replacement: false, seed: 7, epoch: 1 },
      { weights: labels.map((label) => 1 / counts[label]), numSamples: 10, replacement: true, seed: 0, epoch: 2 },
    ];
    const ours = cases.map((draw, i) => {
      const options = { numSamples: draw.numSamples, replacement: draw.replacement };
      const data = labelled(labels).withSampleWeights(i === 3 ? 'balanced' : draw.weights, options);
      return data.batchOrder({ batchSize: 4, seed: draw.seed, epoch: draw.epoch }).flat();
    });
    ours.forEach((order, i) => expect(order).to.have.length(cases[i].numSamples));
    // Weight 0 is never drawn; without replacement nothing twice.
    expect(ours.flat().filter((index, n) => n < 56 && (index === 1 || index === 7))).to.deep.equal([]);
    expect(new Set(ours[2]).size).to.equal(6);
    const expected = torchDraws(cases);
    if (expected === undefined) this.skip();
    expect(ours).to.deep.equal(expected);
  });

  it('loads and trains on the draw, evaluates every sample once, and shards the draw over ranks', async () => {
    // Only sample 3 has weight: every training batch is sample 3.
    const data = labelled([0, 1, 0, 1, 0, 1]).withSampleWeights([0, 0, 0, 1, 0, 0], { numSamples: 8 });
    for await (const batch of data.batches({ batchSize: 4 })) {
      expect(Array.from(batch.input.data as Float32Array)).to.deep.equal([3, 3, 3, 3]);
    }
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(1, 2)),
      loss: 'cross_entropy',
      optimizer: 'sgd',
      config: { numEpochs: 1, batchSize: 4, progressBar: false },
    });
    const history = await trainer.fit(data);
    expect(history.epochs[0].samples).to.equal(8);
    expect((await trainer.evaluate(data)).samples).to.equal(6);
    const ranks = [0, 1].map((rank) => data.batchOrder({ batchSize: 8, rank, worldSize: 2 }).flat());
    expect(ranks.map((order) => order.length)).to.deep.equal([4, 4]);
  });

  it('refuses weights that cannot be drawn from, naming what is wrong', () => {
    const data = labelled([0, 1, 0]);
    expect(errorOf(() => data.withSampleWeights([1, 2])).message).to.contain('one number per sample (3), got 2');
    expect(errorOf(() => data.withSampleWeights([1, -1, 1])).message).to.contain('finite and >= 0');
    expect(errorOf(() => data.withSampleWeights([0, 0, 0])).message).to.contain('not all 0');
    expect(errorOf(() => data.withSampleWeights([1, 0, 1], { numSamples: 3, replacement: false })).message).to.contain(
      'at most the 2 samples of weight > 0, got 3',
    );
    expect(errorOf(() => data.withSampleWeights([1, 1, 1], { replace: true } as never)).message).to.contain(
      "'replace'",
    );
    expect(errorOf(() => data.withSampleWeights([1, 1, 1], { replacement: 'no' } as never)).message).to.contain(
      'replacement must be true or false, got "no"',
    );
    const floats = Dataset.fromArrays({
      inputs: new Float32Array(3),
      inputShape: [3, 1],
      targets: new Float32Array(3),
    });
    expect(errorOf(() => floats.withSampleWeights('balanced')).message).to.contain('class indices');
  });
});
