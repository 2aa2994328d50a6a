// SGD's fused step (native/core/train/fused_sgd.h) against libtorch's per-op
// step (fused: false): the same weights, bit for bit, for every SGD option,
// float32 and float64 parameters, a parameter large enough to be split over
// threads, and with libtorch's default kernels, which round differently.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { nn, OptimizerSpec, SchedulerSpec } from '../src';
import { bothSteps, firstDifference, mlp, trainedWeights } from './fused-sgd-runs';

const cases: { title: string; optimizer: OptimizerSpec; lrScheduler?: SchedulerSpec; numThreads?: number }[] = [
  { title: 'plain SGD', optimizer: { name: 'sgd', lr: 0.05 } },
  { title: 'weight decay without momentum', optimizer: { name: 'sgd', lr: 0.05, weightDecay: 0.02 } },
  { title: 'momentum with dampening', optimizer: { name: 'sgd', lr: 0.05, momentum: 0.9, dampening: 0.3 } },
  { title: 'nesterov momentum with weight decay', optimizer: { name: 'sgd', lr: 0.05, momentum: 0.8, nesterov: true, weightDecay: 0.01 } },
  {
    title: 'parameter groups of their own lr and weight decay',
    optimizer: { name: 'sgd', lr: 0.05, momentum: 0.9, paramGroups: [{ params: ['2.'], lr: 0.01, weightDecay: 0.1 }] },
  },
  {
    title: 'onecycle, which also cycles the momentum',
    optimizer: { name: 'sgd', lr: 0.05, momentum: 0.9 },
    lrScheduler: { name: 'onecycle', maxLr: 0.1 },
  },
  { title: 'two threads', optimizer: { name: 'sgd', lr: 0.05, momentum: 0.9, weightDecay: 0.001 }, numThreads: 2 },
];

describe('fused SGD step', () => {
  for (const { title, optimizer, lrScheduler, numThreads } of cases) {
    it(`gives libtorch's per-op bits: ${title}`, async () => {
      const [fused, perOp] = await bothSteps(mlp, optimizer, { lrScheduler, numThreads });
      expect(firstDifference(fused, perOp)).to.equal(undefined);
      // Training moved the weights: the comparison is not of two untouched models.
      const untouched = await trainedWeights(mlp(), { name: 'sgd', lr: 0 });
      expect(firstDifference(fused, untouched)).to.be.a('string');
    });
  }

  it("gives libtorch's per-op bits for float64 parameters", async () => {
    // 300 -> 21 -> 3, float64, saved by scripts/make-golden-fixtures.py.
    const scripted = path.join(__dirname, '..', '..', 'test', 'fixtures', 'scripted', 'float64-mlp.pt');
    const [fused, perOp] = await bothSteps(() => nn.torchScript(scripted), {
      name: 'sgd',
      lr: 0.05,
      momentum: 0.9,
      nesterov: true,
      weightDecay: 0.01,
    });
    expect(fused['0.weight']).to.be.instanceOf(Float64Array);
    expect(firstDifference(fused, perOp)).to.equal(undefined);
  });

  it("gives libtorch's per-op bits with libtorch's default kernels (ATEN_CPU_CAPABILITY=default)", function () {
    this.timeout(60_000);
    // A fresh process: libtorch picks its kernels once, when it loads.
    const child = spawnSync(process.execPath, [path.join(__dirname, 'fused-sgd-child.js')], {
      encoding: 'utf8',
      env: { ...process.env, ATEN_CPU_CAPABILITY: 'default' },
    });
    expect(child.status, child.stderr).to.equal(0);
    expect(child.stdout.trim()).to.equal('same bits');
  });
});
