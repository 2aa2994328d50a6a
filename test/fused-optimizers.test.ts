// The fused optimizer steps (native/core/optim/fused_sgd.h, fused_adam.h)
// against libtorch's per-op steps (fused: false): the same weights, bit for
// bit, for every option, float32 and float64 parameters, a parameter large
// enough to be split over threads, and with libtorch's default kernels, which
// round differently.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { nn, OptimizerSpec, runtimeInfo, SchedulerSpec } from '../src';
import { bothSteps, firstDifference, mlp, trainedWeights } from './support/fused-optimizer-runs';

const cases: { title: string; optimizer: OptimizerSpec; lrScheduler?: SchedulerSpec; numThreads?: number }[] = [
  { title: 'plain SGD', optimizer: { name: 'sgd', lr: 0.05 } },
  { title: 'SGD, weight decay without momentum', optimizer: { name: 'sgd', lr: 0.05, weightDecay: 0.02 } },
  { title: 'SGD, momentum with dampening', optimizer: { name: 'sgd', lr: 0.05, momentum: 0.9, dampening: 0.3 } },
  {
    title: 'SGD, nesterov momentum with weight decay',
    optimizer: { name: 'sgd', lr: 0.05, momentum: 0.8, nesterov: true, weightDecay: 0.01 },
  },
  {
    title: 'SGD, parameter groups of their own lr and weight decay',
    optimizer: { name: 'sgd', lr: 0.05, momentum: 0.9, paramGroups: [{ params: ['2.'], lr: 0.01, weightDecay: 0.1 }] },
  },
  {
    title: 'SGD under onecycle, which also cycles the momentum',
    optimizer: { name: 'sgd', lr: 0.05, momentum: 0.9 },
    lrScheduler: { name: 'onecycle', maxLr: 0.1 },
  },
  {
    title: 'SGD on two threads',
    optimizer: { name: 'sgd', lr: 0.05, momentum: 0.9, weightDecay: 0.001 },
    numThreads: 2,
  },
  { title: 'Adam', optimizer: { name: 'adam', lr: 0.01 } },
  {
    title: 'Adam, L2 weight decay and amsgrad',
    optimizer: { name: 'adam', lr: 0.01, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.05, amsgrad: true },
  },
  { title: 'AdamW (weight decay 0.01)', optimizer: { name: 'adamw', lr: 0.01 } },
  {
    title: 'AdamW, amsgrad, no decay on biases, a group of its own lr',
    optimizer: {
      name: 'adamw',
      lr: 0.01,
      weightDecay: 0.1,
      amsgrad: true,
      noDecayOnBiasAndNorm: true,
      paramGroups: [{ params: ['4.'], lr: 0.003 }],
    },
  },
  { title: 'AdamW under cosine decay', optimizer: { name: 'adamw', lr: 0.01 }, lrScheduler: { name: 'cosine' } },
  { title: 'AdamW on two threads', optimizer: { name: 'adamw', lr: 0.01, amsgrad: true }, numThreads: 2 },
];

describe('fused optimizer steps', () => {
  it('run for SGD, Adam and AdamW here (their check against libtorch passed)', () => {
    expect(runtimeInfo().fusedOptimizers).to.deep.equal(['sgd', 'adam', 'adamw']);
  });

  for (const { title, optimizer, lrScheduler, numThreads } of cases) {
    it(`give libtorch's per-op bits: ${title}`, async () => {
      const [fused, perOp] = await bothSteps(mlp, optimizer, { lrScheduler, numThreads });
      expect(firstDifference(fused, perOp)).to.equal(undefined);
      // Training moved the weights: the comparison is not of two untouched models.
      const untouched = await trainedWeights(mlp(), { name: 'sgd', lr: 0 });
      expect(firstDifference(fused, untouched)).to.be.a('string');
    });
  }

  for (const optimizer of [
    { name: 'sgd', lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 0.01 },
    { name: 'adam', lr: 0.01, weightDecay: 0.01 },
    { name: 'adamw', lr: 0.01, amsgrad: true },
  ] as OptimizerSpec[]) {
    it(`give libtorch's per-op bits for float64 parameters: ${optimizer.name}`, async () => {
      // 300 -> 21 -> 3, float64, saved by scripts/make-golden-fixtures.py.
      const scripted = path.join(__dirname, '..', '..', 'test', 'fixtures', 'scripted', 'float64-mlp.pt');
      const [fused, perOp] = await bothSteps(() => nn.torchScript(scripted), optimizer);
      expect(fused['0.weight']).to.be.instanceOf(Float64Array);
      expect(firstDifference(fused, perOp)).to.equal(undefined);
    });
  }

  it("give libtorch's per-op bits with libtorch's default kernels (ATEN_CPU_CAPABILITY=default)", function () {
    this.timeout(60_000);
    // A fresh process: libtorch picks its kernels once, when it loads.
    const child = spawnSync(process.execPath, [path.join(__dirname, 'support', 'fused-optimizers-child.js')], {
      encoding: 'utf8',
      env: { ...process.env, ATEN_CPU_CAPABILITY: 'default' },
    });
    expect(child.status, child.stderr).to.equal(0);
    expect(JSON.parse(child.stdout)).to.deep.equal({
      fused: ['sgd', 'adam', 'adamw'],
      results: { sgd: 'same bits', adam: 'same bits', adamw: 'same bits' },
    });
  });
});
