// LayerNorm layers in a lowered predict (native/core/graph/layer_norm_lowering.cpp): where the CPU has AVX2 (and
// FMA), one over the last dimension runs firebrand's row kernel (native/core/nn/layer_norm_rows.cpp; its AVX-512
// version where the CPU has that), else libtorch's op. The reference is the same graph run layer by layer
// (optimizeForInference: false).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { Trainer, type TensorData } from '../src';
import { hasAvx2 } from './support/cpu';
import { expectClose } from './support/expect-close';
import { normInputs, Norms, ROWS, WIDTH } from './support/layer-norms';

/** The child's lowered and layer-by-layer outputs under FIREBRAND_CPU_BASELINE=`baseline`. */
function childOutputs(baseline: string): { lowered: number[]; layerByLayer: number[] } {
  const child = spawnSync(process.execPath, [path.join(__dirname, 'support', 'layer-norm-child.js')], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, FIREBRAND_CPU_BASELINE: baseline },
  });
  expect(child.status, child.stderr).to.equal(0);
  return JSON.parse(child.stdout) as { lowered: number[]; layerByLayer: number[] };
}

describe("predict's lowered LayerNorm layers", function () {
  this.timeout(60_000);

  it('agree with the layers run one by one: tails, no affine, one row and many', async () => {
    const trainer = new Trainer({ model: new Norms(), config: { seed: 2, progressBar: false } });
    for (const batch of [1, 4]) {
      const shape = [batch, ROWS, WIDTH];
      const lowered = await trainer.predict<TensorData[]>(normInputs(batch), shape);
      const plain = await trainer.predict<TensorData[]>(normInputs(batch), shape, { optimizeForInference: false });
      for (const [index, name] of ['280 columns', '7 columns', '40 columns, no affine'].entries()) {
        expectClose(lowered[index], plain[index], `batch ${batch}: ${name}`, { tolerance: 1e-5 });
        // Where the kernel runs, it rounds differently from libtorch's somewhere; elsewhere libtorch's op runs.
        const same = Array.from(lowered[index].data).every((value, i) => value === plain[index].data[i]);
        expect(same, name).to.equal(!hasAvx2());
      }
    }
  });

  it('agrees with the layers run one by one on its AVX2 version too (FIREBRAND_CPU_BASELINE=avx2)', function () {
    if (!hasAvx2()) {
      console.log('      skipped: this CPU has no AVX2 and FMA, so the kernel has no AVX2 version to run here');
      this.skip();
    }
    const { lowered, layerByLayer } = childOutputs('avx2');
    expect(lowered).to.have.length(3 * ROWS * WIDTH * 3);
    expectClose(lowered, layerByLayer, 'the AVX2 rows', { tolerance: 1e-5 });
    expect(lowered, 'the AVX2 rows round differently from libtorch somewhere').not.to.deep.equal(layerByLayer);
  });

  it("runs libtorch's op where the kernel stands aside (FIREBRAND_CPU_BASELINE=1)", () => {
    const { lowered, layerByLayer } = childOutputs('1');
    expect(lowered).to.have.length(3 * ROWS * WIDTH * 3);
    expect(lowered).to.deep.equal(layerByLayer);
  });
});
