// predict's inference lowering (native/core/graph/inference_folding.cpp): a Conv2d read only by a
// BatchNorm2d runs as one convolution with the BatchNorm (and a ReLU that alone reads it) folded in, and
// convolutions read and pass on channels-last activations (channels_last_lowering.cpp); where libtorch has
// oneDNN's prepacked convolution, a folded float32 one runs it with its weight packed once per input size
// (packed_convolution.cpp). The reference is the same graph run layer by layer (optimizeForInference:
// false), which TorchScript export tests hold bit-equal to PyTorch.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, F, Model, nn, runtimeInfo, Trainer, type Tensor, type TensorData } from '../src';
import { expectClose } from './support/expect-close';
import { rejectionOf } from './support/helpers';

class ConvNet extends nn.Module {
  conv1 = nn.conv2d(3, 8, 3, { padding: 1, bias: false });
  bn1 = nn.batchNorm2d(8);
  conv2 = nn.conv2d(8, 8, 3, { stride: 2, padding: 1 });
  bn2 = nn.batchNorm2d(8);
  // Read twice (by bn3 and by the sum): it stays unfolded (and runs lowered alone).
  conv3 = nn.conv2d(8, 8, 1);
  bn3 = nn.batchNorm2d(8);
  head = nn.linear(8 * 4 * 4, 3);
  forward(x: Tensor): Tensor {
    const y = this.bn2.forward(this.conv2.forward(this.bn1.forward(this.conv1.forward(x)).relu())).relu();
    const z = this.conv3.forward(y);
    return this.head.forward(this.bn3.forward(z).add(z).flatten(1));
  }
}

// Channels-last activations meet ops that need the default order: a view of a convolution's map, a
// depthwise convolution, a squeeze-and-excitation product, and a map as the model's output.
class MapNet extends nn.Module {
  stem = nn.conv2d(3, 8, 3, { padding: 1 });
  depthwise = nn.conv2d(8, 8, 3, { padding: 1, groups: 8, bias: false });
  norm = nn.batchNorm2d(8);
  squeeze = nn.conv2d(8, 4, 1);
  excite = nn.conv2d(4, 8, 1);
  pool = nn.adaptiveAvgPool2d(1);
  head = nn.linear(8 * 8 * 8, 5);
  forward(x: Tensor): Tensor[] {
    const y = F.hardswish(this.norm.forward(this.depthwise.forward(this.stem.forward(x).relu())));
    const scale = F.hardsigmoid(this.excite.forward(this.squeeze.forward(this.pool.forward(y)).relu()));
    const z = y.mul(scale);
    // view needs the default order: the lowering gives it back; the transpose reads the map as NHWC does.
    return [this.head.forward(z.view(x.size(0), 8 * 8 * 8)), z, z.transpose(1, 3).contiguous()];
  }
}

/** The lines test/support/packed-convolution-child.js prints with `args`, under oneDNN's trace and `env`. */
function tracedChild(args: string[], env: NodeJS.ProcessEnv = {}): string[] {
  const child = spawnSync(process.execPath, [path.join(__dirname, 'support', 'packed-convolution-child.js'), ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, ONEDNN_VERBOSE: '1', DNNL_VERBOSE: '1', ...env },
  });
  expect(child.status, child.stderr).to.equal(0);
  return child.stdout.split('\n');
}

describe("predict's inference lowering: channels-last activations", function () {
  this.timeout(60_000);
  const inputs = Float32Array.from({ length: 4 * 3 * 8 * 8 }, (_, i) => Math.sin(i * 0.37) - Math.cos(i * 0.05));

  it('gives every output, maps included, as the layers run one by one do, on a Trainer and a loaded Model', async () => {
    const trainer = new Trainer({ model: new MapNet(), config: { progressBar: false, numThreads: 1, seed: 9 } });
    const shape = [4, 3, 8, 8];
    const lowered = await trainer.predict<TensorData[]>(inputs, shape);
    const plain = await trainer.predict<TensorData[]>(inputs, shape, { optimizeForInference: false });
    expect(lowered.map((output) => output.shape)).to.deep.equal([
      [4, 5],
      [4, 8, 8, 8],
      [4, 8, 8, 8],
    ]);
    for (const [index, name] of ['logits', 'map', 'transposed map'].entries()) {
      expectClose(lowered[index], plain[index], name, { tolerance: 1e-5 });
    }
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-lowering-'));
    try {
      await trainer.save(folder);
      const model = await Model.load(folder);
      const loaded = await model.predict<TensorData[]>(inputs, shape);
      for (const [index, output] of loaded.entries()) {
        expect(Array.from(output.data)).to.deep.equal(Array.from(lowered[index].data));
      }
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe("predict's inference lowering: BatchNorm folded into the convolution before it", function () {
  this.timeout(60_000);
  const inputs = Float32Array.from({ length: 16 * 3 * 8 * 8 }, (_, i) => Math.sin(i * 0.7) + Math.cos(i * 0.13));
  const targets = Int32Array.from({ length: 16 }, (_, i) => i % 3);
  const make = () =>
    new Trainer({
      model: new ConvNet(),
      loss: 'cross_entropy',
      optimizer: { name: 'sgd', lr: 0.1 },
      config: { progressBar: false, numThreads: 1, seed: 4, batchSize: 4, numEpochs: 2 },
    });

  it('agrees with the layers run one by one to float32 rounding, after training moved the statistics', async () => {
    const trainer = make();
    await trainer.fit(Dataset.fromArrays({ inputs, inputShape: [16, 3, 8, 8], targets }));
    const lowered = await trainer.predict(inputs, [16, 3, 8, 8]);
    const plain = await trainer.predict(inputs, [16, 3, 8, 8], { optimizeForInference: false });
    expectClose(lowered, plain, 'lowered logits', { tolerance: 1e-5 });
    // The lowering ran: folded weights round differently somewhere.
    expect(Array.from(lowered.data)).to.not.deep.equal(Array.from(plain.data));
    // A loaded model lowers the same way.
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-lowering-'));
    try {
      await trainer.save(folder);
      const model = await Model.load(folder);
      expect(Array.from((await model.predict(inputs, [16, 3, 8, 8])).data)).to.deep.equal(Array.from(lowered.data));
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('folds the weights again when training changes them', async () => {
    const trainer = make();
    const before = await trainer.predict(inputs, [16, 3, 8, 8]);
    await trainer.fit(Dataset.fromArrays({ inputs, inputShape: [16, 3, 8, 8], targets }));
    const after = await trainer.predict(inputs, [16, 3, 8, 8]);
    expect(Array.from(after.data)).to.not.deep.equal(Array.from(before.data));
    expectClose(after, await trainer.predict(inputs, [16, 3, 8, 8], { optimizeForInference: false }), 'after fit');
  });

  it('agrees at each input size in turn, more sizes than a convolution keeps packed, and at the first again', async () => {
    const trainer = make();
    await trainer.fit(Dataset.fromArrays({ inputs, inputShape: [16, 3, 8, 8], targets }));
    for (const batch of [16, 1, 3, 5, 7, 16, 1]) {
      const shape = [batch, 3, 8, 8];
      const part = inputs.subarray(0, batch * 3 * 8 * 8);
      const lowered = await trainer.predict(part, shape);
      expectClose(lowered, await trainer.predict(part, shape, { optimizeForInference: false }), `batch ${batch}`, {
        tolerance: 1e-5,
      });
    }
  });

  it("packs each convolution's weight once and reads every input channels-last, one-channel images too", function () {
    // Counts the reorders oneDNN runs in 2 and in 6 calls of 1x1 and depthwise convolutions, whose weights
    // ([O, I, 1, 1], [C, 1, k, k]) are dense both in rows and channels-last: packed for rows, each call
    // on channels-last activations reordered them again. A convolution without a BatchNorm, run as
    // written, reordered its weight at every call too.
    const run = (calls: number) => {
      const lines = tracedChild([String(calls)]);
      const convolutions = lines.filter((line) => line.includes('exec,cpu,convolution'));
      return {
        convolutions: convolutions.length,
        // oneDNN 2.x writes src_f32::blocked:acdb, 3.x src:f32::blocked:acdb (channels-last).
        inRows: convolutions.filter((line) => !/src[_:]f32:+blocked:acdb/.test(line)).length,
        reorders: lines.filter((line) => line.includes('exec,cpu,reorder')).length,
      };
    };
    const [two, six] = [run(2), run(6)];
    if (six.convolutions === 0) {
      console.log("      skipped: this libtorch's convolutions do not run oneDNN (no verbose lines)");
      this.skip();
    }
    expect(six.convolutions, JSON.stringify({ two, six })).to.equal(3 * two.convolutions);
    expect(six.reorders, JSON.stringify({ two, six })).to.equal(two.reorders);
    // The one-channel images ([N, 1, H, W], dense in both orders) are read channels-last too.
    expect(six.inRows, JSON.stringify({ two, six })).to.equal(0);
  });

  it("runs each convolution as a oneDNN primitive of its own where libtorch links oneDNN 3, as libtorch's op computes it", function () {
    // FIREBRAND_ONEDNN_CONVOLUTION=0 runs libtorch's prepacked convolution (oneDNN's forward_training kind,
    // which fuses a ReLU only); firebrand's primitives run forward_inference, the same kernels, with a ReLU,
    // Hardswish or Hardsigmoid as the post-op. Strided, dilated and grouped convolutions, a batch size that
    // changes: the outputs within 1e-5 of the network run as written.
    if (!runtimeInfo().onednnConvolution) {
      console.log(
        "      skipped: this libtorch links no oneDNN 3 (its prepacked convolution runs predict's convolutions)",
      );
      this.skip();
    }
    const run = (setting: string | undefined) => {
      const lines = tracedChild(['1', 'outputs'], { FIREBRAND_ONEDNN_CONVOLUTION: setting });
      const inference = lines.filter((line) => /exec,cpu,convolution,.*forward_inference/.test(line));
      return {
        inference,
        outputs: JSON.parse(lines.find((line) => line.startsWith('{'))!) as Record<string, number[]>,
      };
    };
    const [own, libtorch] = [run(undefined), run('0')];
    // 6 convolutions in each of the 3 lowered calls, the activations after them as their post-ops.
    expect(own.inference).to.have.length(18);
    expect(libtorch.inference).to.have.length(0);
    for (const activation of ['relu', 'hardswish', 'hardsigmoid'])
      expect(own.inference.filter((line) => line.includes(`post-ops:eltwise_${activation}`))).to.not.be.empty;
    for (const [name, expected] of Object.entries(libtorch.outputs)) {
      expect(own.outputs[name], name).to.have.length(expected.length);
      expectClose(own.outputs[name], expected, `${name}, against libtorch's op`, { tolerance: 1e-5 });
      if (name.endsWith('lowered'))
        expectClose(own.outputs[name], own.outputs[name.replace('lowered', 'as written')], name);
    }
    expect(Math.max(...own.outputs['3 lowered'].map(Math.abs))).to.be.greaterThan(1e-3);
  });

  it('packs each weight once for oneDNN primitives of several batch sizes, where libtorch packed it per size', function () {
    // A model predicting at batch sizes 2, 3, 5: each of the 6 convolutions' weights reordered once (the
    // layouts oneDNN picks agree across these sizes), not once per size as libtorch's prepacked op does.
    if (!runtimeInfo().onednnConvolution) {
      console.log('      skipped: this libtorch links no oneDNN 3 (its prepacked convolution packs per size)');
      this.skip();
    }
    const reorders = (setting: string | undefined) =>
      tracedChild(['2', 'sizes'], { FIREBRAND_ONEDNN_CONVOLUTION: setting }).filter((line) =>
        line.includes('exec,cpu,reorder'),
      ).length;
    expect(reorders(undefined)).to.equal(6);
    expect(reorders('0')).to.equal(18);
  });

  it('says a kernel larger than the padded input as PyTorch does, then predicts the next input', async () => {
    // oneDNN's packing failed on such an input with an error about format tags, and packing was then off
    // for the layer: the lowered run now leaves the input to at::conv2d, whose error names the sizes.
    const trainer = new Trainer({
      model: nn.sequential(nn.conv2d(2, 4, 5), nn.batchNorm2d(4), nn.relu()),
      config: { progressBar: false, seed: 1 },
    });
    const error = await rejectionOf(trainer.predict(new Float32Array(2 * 2 * 3 * 3), [2, 2, 3, 3]));
    expect(error.message).to.match(/Kernel size: \(5 x 5\)\. Kernel size can't be greater than actual input size/);
    const fits = Float32Array.from({ length: 2 * 2 * 6 * 6 }, (_, i) => Math.cos(i));
    const [lowered, asWritten] = [
      await trainer.predict(fits, [2, 2, 6, 6]),
      await trainer.predict(fits, [2, 2, 6, 6], { optimizeForInference: false }),
    ];
    expect(lowered.shape).to.deep.equal([2, 4, 2, 2]);
    expectClose(lowered.data as Float32Array, asWritten.data as Float32Array, 'the next input');
  });

  it('refuses an optimizeForInference that is not a boolean', async () => {
    const error = await rejectionOf(make().predict(inputs, [16, 3, 8, 8], { optimizeForInference: 'yes' as never }));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.match(/optimizeForInference must be true or false/);
  });
});

// Causal attention, and attention under a boolean and an additive mask made from the input.
class AttentionNet extends nn.Module {
  qkv = nn.linear(32, 96);
  out = nn.linear(32, 8);
  forward(x: Tensor): Tensor {
    const [batch, time] = [x.size(0), x.size(1)];
    const [q, k, v] = this.qkv
      .forward(x)
      .split([32, 32, 32], 2)
      .map((t) => t.view(batch, time, 4, 8).transpose(1, 2));
    const keep = x.select(2, 0).gt(-0.5).view(batch, 1, 1, time);
    const causal = F.scaledDotProductAttention(q, k, v, { isCausal: true, dropoutP: 0.2 });
    const masked = F.scaledDotProductAttention(q, k, v, { attnMask: keep, scale: 0.3 });
    const added = F.scaledDotProductAttention(q, k, v, { attnMask: x.select(2, 1).view(batch, 1, 1, time) });
    const heads = [causal, masked, added].map((y) => y.transpose(1, 2).contiguous().view(batch, time, 32));
    return this.out.forward(heads[0].add(heads[1]).add(heads[2]));
  }
}

describe("predict's inference lowering: PyTorch's fused attention (libtorch 2.1 and later)", function () {
  this.timeout(60_000);
  const shape = [3, 40, 32];
  const inputs = Float32Array.from({ length: 3 * 40 * 32 }, (_, i) => Math.sin(i * 0.61) + 0.3 * Math.cos(i * 0.07));

  it('agrees with the attention formula run op by op to float32 rounding, causal and under masks', async () => {
    const trainer = new Trainer({ model: new AttentionNet(), config: { progressBar: false, numThreads: 1, seed: 5 } });
    const fused = await trainer.predict(inputs, shape);
    const plain = await trainer.predict(inputs, shape, { optimizeForInference: false });
    expectClose(fused, plain, 'attention outputs', { tolerance: 1e-5 });
    const [major, minor] = runtimeInfo().torchVersion.split('.').map(Number);
    if (major > 2 || (major === 2 && minor >= 1)) {
      // PyTorch's kernel ran: it sums in blocks, in another order than the formula.
      expect(Array.from(fused.data)).to.not.deep.equal(Array.from(plain.data));
    } else console.log(`      (libtorch ${runtimeInfo().torchVersion} has no fused attention: both ran the formula)`);
  });
});
