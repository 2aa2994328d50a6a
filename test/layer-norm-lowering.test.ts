// LayerNorm layers in a lowered predict (native/core/graph/layer_norm_lowering.cpp): where the CPU has AVX-512,
// one over the last dimension runs firebrand's row kernel (native/core/nn/layer_norm_rows.cpp), else libtorch's
// op. The reference is the same graph run layer by layer (optimizeForInference: false).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { Trainer, type TensorData } from '../src';
import { hasAvx512 } from './support/cpu';
import { expectClose } from './support/expect-close';
import { normInputs, Norms, ROWS, WIDTH } from './support/layer-norms';

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
        expect(same, name).to.equal(!hasAvx512());
      }
    }
  });

  it("runs libtorch's op where the kernel stands aside (FIREBRAND_CPU_BASELINE=avx2)", () => {
    const child = spawnSync(process.execPath, [path.join(__dirname, 'support', 'layer-norm-child.js')], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: { ...process.env, FIREBRAND_CPU_BASELINE: 'avx2' },
    });
    expect(child.status, child.stderr).to.equal(0);
    const { lowered, layerByLayer } = JSON.parse(child.stdout) as { lowered: number[]; layerByLayer: number[] };
    expect(lowered).to.have.length(3 * ROWS * WIDTH * 3);
    expect(lowered).to.deep.equal(layerByLayer);
  });
});
