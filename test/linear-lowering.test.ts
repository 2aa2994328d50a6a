// predict's lowered linear layers (native/core/graph/linear_lowering.cpp): where libtorch links oneDNN 3, each
// float32 linear layer of a traced model runs as a oneDNN matmul of firebrand's own, its weight packed once per
// weight version, with a GELU (erf or tanh), SiLU or ReLU that alone reads it as the matmul's post-op. The
// reference is the same graph run layer by layer (optimizeForInference: false).
import { expect } from 'chai';

import { Dataset, F, nn, runtimeInfo, Trainer, type Tensor, type TensorData } from '../src';
import { expectClose } from './support/expect-close';
import { predicts } from './support/lowered-linear';

const FEATURES = 12;

/** With `taps`, each activation's output is an output too: compared on its own, a wrong one shows. */
class Mlp extends nn.Module {
  constructor(private readonly taps = false) {
    super();
  }
  erf = nn.linear(FEATURES, 24);
  tanh = nn.linear(24, 20);
  silu = nn.linear(20, 16);
  relu = nn.linear(16, 16);
  // Read twice (by a ReLU and by the sum): no activation runs inside it.
  shared = nn.linear(16, 8);
  head = nn.linear(8, 3, { bias: false });
  forward(x: Tensor): Tensor | Tensor[] {
    const a = F.gelu(this.erf.forward(x));
    const b = F.gelu(this.tanh.forward(a), 'tanh');
    const c = F.silu(this.silu.forward(b));
    const d = F.relu(this.relu.forward(c));
    const e = this.shared.forward(d);
    const out = this.head.forward(e.relu().add(e));
    return this.taps ? [a, b, c, d, out] : out;
  }
}
const LAYERS = 6;

describe("predict's lowered linear layers", function () {
  this.timeout(60_000);
  const positions = 7;
  const inputs = Float32Array.from({ length: 16 * positions * FEATURES }, (_, i) => Math.sin(i * 0.61) * 2);
  const make = (taps = false) =>
    new Trainer({
      model: new Mlp(taps),
      loss: 'mse',
      optimizer: { name: 'sgd', lr: 0.5 },
      config: { progressBar: false, numThreads: 1, seed: 5, batchSize: 4, numEpochs: 1 },
    });
  const matmuls = () => runtimeInfo().onednnMatmulProducts;

  it('agree with the layers run one by one at each row count in turn, more than a layer keeps, and the first again', async () => {
    const trainer = make(true);
    for (const batch of [16, 1, 3, 5, 7, 16, 2]) {
      const shape = [batch, positions, FEATURES];
      const part = inputs.subarray(0, batch * positions * FEATURES);
      const before = matmuls();
      // One forward of all the rows (batchSize: the whole batch).
      const lowered = await trainer.predict<TensorData[]>(part, shape, { batchSize: batch });
      const ran = matmuls() - before;
      const plain = await trainer.predict<TensorData[]>(part, shape, { batchSize: batch, optimizeForInference: false });
      for (const [index, name] of ['gelu', "gelu 'tanh'", 'silu', 'relu', 'head'].entries())
        expectClose(lowered[index], plain[index], `batch ${batch}: ${name}`, { tolerance: 1e-5 });
      expect(ran).to.equal(runtimeInfo().onednnMatmul ? LAYERS : 0);
    }
  });

  it('pack the weights again when training changes them', async () => {
    const trainer = make();
    const shape = [16, positions, FEATURES];
    const before = await trainer.predict(inputs, shape);
    const targets = Float32Array.from({ length: 16 * positions * 3 }, (_, i) => Math.cos(i * 0.3));
    await trainer.fit(Dataset.fromArrays({ inputs, inputShape: shape, targets, targetShape: [16, positions, 3] }));
    const after = await trainer.predict(inputs, shape);
    expect(Array.from(after.data)).to.not.deep.equal(Array.from(before.data));
    expectClose(after, await trainer.predict(inputs, shape, { optimizeForInference: false }), 'after fit', {
      tolerance: 1e-5,
    });
  });

  it('leave a layer with a LoRA adapter to run as written, its adapter included', async () => {
    const trainer = new Trainer({
      model: new Mlp(),
      loss: 'mse',
      optimizer: { name: 'adamw', lr: 0.05 },
      lora: { r: 4, alpha: 8, targetModules: ['erf', 'head'] },
      config: { progressBar: false, numThreads: 1, seed: 6, batchSize: 4, numEpochs: 1 },
    });
    const shape = [16, positions, FEATURES];
    const targets = Float32Array.from({ length: 16 * positions * 3 }, (_, i) => Math.cos(i * 0.3));
    const before = await trainer.predict(inputs, shape, { optimizeForInference: false });
    // Trained, the adapters' B matrices are no longer zero: they change the outputs.
    await trainer.fit(Dataset.fromArrays({ inputs, inputShape: shape, targets, targetShape: [16, positions, 3] }));
    const counted = matmuls();
    const lowered = await trainer.predict(inputs, shape, { batchSize: 16 });
    expect(matmuls() - counted).to.equal(runtimeInfo().onednnMatmul ? LAYERS - 2 : 0);
    const plain = await trainer.predict(inputs, shape, { batchSize: 16, optimizeForInference: false });
    expect(Array.from(plain.data)).to.not.deep.equal(Array.from(before.data));
    expectClose(lowered, plain, 'with adapters', { tolerance: 1e-5 });
  });

  it("leave a single row to generation's streamed kernel, and run nothing packed layer by layer", async () => {
    const trainer = make();
    const row = inputs.subarray(0, FEATURES);
    const before = matmuls();
    const lowered = await trainer.predict(row, [1, FEATURES]);
    await trainer.predict(inputs, [16, positions, FEATURES], { optimizeForInference: false });
    expect(matmuls()).to.equal(before);
    expectClose(lowered, await trainer.predict(row, [1, FEATURES], { optimizeForInference: false }), 'one row', {
      tolerance: 1e-5,
    });
  });

  it('pack no weight over 8 MB: its product reads the weight where it lies (no packed copy beside it)', async () => {
    // The middle weight is 1,500 x 1,500 floats (9 MB); the others are packed.
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(FEATURES, 1500), nn.relu(), nn.linear(1500, 1500), nn.relu(), nn.linear(1500, 3)),
      config: { progressBar: false, numThreads: 1, seed: 7 },
    });
    const shape = [16, positions, FEATURES];
    const before = runtimeInfo();
    const lowered = await trainer.predict(inputs, shape, { batchSize: 16 });
    const after = runtimeInfo();
    const oneDnn3 = runtimeInfo().onednnMatmul;
    expect(after.onednnMatmulProducts - before.onednnMatmulProducts).to.equal(oneDnn3 ? 2 : 0);
    expect(after.onednnPlainMatmulProducts - before.onednnPlainMatmulProducts).to.equal(oneDnn3 ? 1 : 0);
    const plain = await trainer.predict(inputs, shape, { batchSize: 16, optimizeForInference: false });
    expectClose(lowered, plain, 'outputs', { tolerance: 1e-5 });
  });

  it("run on oneDNN's sgemm instead under FIREBRAND_ONEDNN_MATMUL=0", function () {
    if (!runtimeInfo().onednnMatmul) {
      console.log(
        '    (skipped: no oneDNN 3 matmul in this libtorch, or FIREBRAND_ONEDNN_MATMUL=0: nothing to turn off)',
      );
      this.skip();
    }
    const packed = predicts('lowered');
    const sgemm = predicts('lowered', { FIREBRAND_ONEDNN_MATMUL: '0' });
    // 3 predicts of 3 linear layers each (one without a bias, one read by a GELU).
    expect([packed.matmulProducts, packed.sgemmProducts]).to.deep.equal([9, 0]);
    expect([sgemm.matmulProducts, sgemm.sgemmProducts]).to.deep.equal([0, runtimeInfo().onednnSgemm ? 9 : 0]);
    expectClose(packed.outputs, sgemm.outputs, 'outputs', { tolerance: 1e-5 });
  });
});
