// Frozen float32 linear layers (a `freeze`d layer, LoRA's base projections) compute their output and their
// input's gradient through oneDNN's sgemm where the libtorch links a oneDNN that exports it
// (native/core/nn/frozen_linear.h), while training; and every float32 linear layer does inside a predict
// lowered for inference. The reference is libtorch's own linear layer, which FIREBRAND_ONEDNN_SGEMM=0 and
// optimizeForInference: false keep: the same losses, trained weights and predictions to float32 rounding.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { runtimeInfo } from '../src';
import { expectClose } from './support/expect-close';
import { predicts } from './support/lowered-linear';

interface FrozenMiddle {
  losses: number[];
  initial: Record<string, number[]>;
  weights: Record<string, number[]>;
  predictions: number[];
  plainMatmulProducts: number;
}

interface Run {
  onednnSgemm: boolean;
  onednnMatmul: boolean;
  middle: FrozenMiddle;
  wide: FrozenMiddle;
  lora: { losses: number[]; weights: Record<string, number[]> };
  checkpointed: { losses: number[]; weights: Record<string, number[]> };
}

function run(env: NodeJS.ProcessEnv): Run {
  const child = spawnSync(process.execPath, [path.join(__dirname, 'support', 'frozen-linear-child.js')], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...env },
  });
  expect(child.status, child.stderr).to.equal(0);
  return JSON.parse(child.stdout) as Run;
}

describe("frozen linear layers on oneDNN's sgemm", function () {
  this.timeout(300_000);
  let viaOnednn: Run;
  let viaLibtorch: Run;

  before(function () {
    if (!runtimeInfo().onednnSgemm) {
      console.log(
        "    (skipped: this libtorch's oneDNN exports no dnnl_sgemm, or FIREBRAND_ONEDNN_SGEMM=0: libtorch's linear runs)",
      );
      this.skip();
    }
    viaOnednn = run({ FIREBRAND_ONEDNN_SGEMM: undefined });
    viaLibtorch = run({ FIREBRAND_ONEDNN_SGEMM: '0' });
  });

  it('run where found, and not under FIREBRAND_ONEDNN_SGEMM=0', () => {
    expect(viaOnednn.onednnSgemm).to.equal(true);
    expect(viaLibtorch.onednnSgemm).to.equal(false);
  });

  // The frozen layer kept its weights, and the one below it trained on the gradient that came through it:
  // its updates agree to 1e-4 of the largest (the weights' own closeness hides an update's small errors).
  function expectSameTraining(viaOnednn: FrozenMiddle, viaLibtorch: FrozenMiddle): void {
    expect(viaOnednn.losses).to.have.length(viaLibtorch.losses.length).and.length.greaterThan(3);
    expectClose(viaOnednn.losses, viaLibtorch.losses, 'losses');
    for (const [name, values] of Object.entries(viaLibtorch.weights))
      expectClose(viaOnednn.weights[name], values, name);
    expectClose(viaOnednn.predictions, viaLibtorch.predictions, 'predictions');
    expect(viaOnednn.weights['2.weight']).to.deep.equal(viaOnednn.initial['2.weight']);
    const update = (run: FrozenMiddle) => run.weights['0.weight'].map((w, i) => w - run.initial['0.weight'][i]);
    const expected = update(viaLibtorch);
    const largest = Math.max(...expected.map(Math.abs));
    expect(largest).to.be.greaterThan(1e-3);
    expectClose(update(viaOnednn), expected, '0.weight updates', { tolerance: 1e-4 * largest, absolute: true });
  }

  it("train a layer below a frozen one (its input gradient, its bias) as libtorch's linear does", () => {
    expectSameTraining(viaOnednn.middle, viaLibtorch.middle);
    expect(viaOnednn.middle.plainMatmulProducts).to.equal(0);
  });

  it("compute a wide frozen layer's output on oneDNN 3's matmul reading the weight in place, as libtorch's linear", function () {
    expectSameTraining(viaOnednn.wide, viaLibtorch.wide);
    expect(viaLibtorch.wide.plainMatmulProducts).to.equal(0);
    if (!viaOnednn.onednnMatmul) {
      console.log('      (no oneDNN 3 matmul in this libtorch: the sgemm computed the wide layer, as checked above)');
      expect(viaOnednn.wide.plainMatmulProducts).to.equal(0);
      return;
    }
    // 2 epochs of 2 batches of 64 rows: one forward each.
    expect(viaOnednn.wide.plainMatmulProducts).to.equal(4);
  });

  it("train LoRA adapters over frozen projections as libtorch's linear does", () => {
    expect(viaOnednn.lora.losses).to.have.length(3);
    expectClose(viaOnednn.lora.losses, viaLibtorch.lora.losses, 'losses');
    for (const [name, values] of Object.entries(viaLibtorch.lora.weights))
      expectClose(viaOnednn.lora.weights[name], values, name);
  });

  it('run every linear layer of a predict lowered for inference without packed matmuls, none run layer by layer', () => {
    // FIREBRAND_ONEDNN_MATMUL=0: no packed oneDNN matmul (test/linear-lowering.test.ts) takes them first.
    const lowered = predicts('lowered', { FIREBRAND_ONEDNN_MATMUL: '0' });
    const layerByLayer = predicts('layer-by-layer');
    // 3 predicts of 3 linear layers each (one without a bias).
    expect(lowered.sgemmProducts).to.equal(9);
    expect(lowered.matmulProducts).to.equal(0);
    expect(layerByLayer.sgemmProducts + layerByLayer.matmulProducts).to.equal(0);
    expect(lowered.outputs).to.have.length(9 * 5);
    expectClose(lowered.outputs, layerByLayer.outputs, 'lowered outputs', { tolerance: 1e-5 });
    // Under FIREBRAND_ONEDNN_SGEMM=0 too the lowered predict runs libtorch's linear: bit for bit layer by layer.
    const kept = predicts('lowered', { FIREBRAND_ONEDNN_SGEMM: '0', FIREBRAND_ONEDNN_MATMUL: '0' });
    expect(kept.sgemmProducts).to.equal(0);
    expect(kept.outputs).to.deep.equal(layerByLayer.outputs);
  });

  it('recompute checkpointed decoder layers as their first pass computed them: the same LoRA steps bit for bit', () => {
    expect(viaOnednn.checkpointed.losses).to.deep.equal(viaOnednn.lora.losses);
    expect(viaOnednn.checkpointed.weights).to.deep.equal(viaOnednn.lora.weights);
  });
});
