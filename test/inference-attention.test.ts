// Attention at inference (native/core/nn/inference_attention.h): where the CPU has AVX-512, a float32
// prediction's scaled dot-product attention with no mask, or a causal one, runs firebrand's own kernel (tiles
// of 8 queries against keys in blocks of 16 positions); generate's prompt too. The reference is the same graph
// run layer by layer (optimizeForInference: false: PyTorch's attention formula, which the TorchScript export
// tests hold bit-equal to PyTorch), and the portable build of the same predict (FIREBRAND_CPU_BASELINE=avx2,
// where the kernel stands aside for PyTorch's).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { Trainer } from '../src';
import { Attend, attendShapes as shapes, describeShape, inputsFor } from './support/attend-module';
import { hasAvx512 } from './support/cpu';
import { expectClose } from './support/expect-close';

/** Each shape's lowered and layer-by-layer outputs on a batch of 3, as test/support/inference-attention-child.js gives. */
function childOutputs(env: NodeJS.ProcessEnv): { lowered: number[]; layerByLayer: number[] }[] {
  const child = spawnSync(process.execPath, [path.join(__dirname, 'support', 'inference-attention-child.js')], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, ...env },
  });
  expect(child.status, child.stderr).to.equal(0);
  return JSON.parse(child.stdout);
}

describe('attention at inference', function () {
  this.timeout(120_000);

  it('gives the outputs of the layers run one by one, for causal and full attention of any length', async () => {
    if (!hasAvx512()) console.log("    (this CPU has no AVX-512: PyTorch's attention runs, and is what this checks)");
    for (const [index, shape] of shapes.entries()) {
      const trainer = new Trainer({ model: new Attend(shape), config: { seed: index, progressBar: false } });
      const { data, shape: inputShape } = inputsFor(shape);
      const lowered = await trainer.predict(data, inputShape);
      const layerByLayer = await trainer.predict(data, inputShape, { optimizeForInference: false });
      expect(lowered.shape).to.deep.equal([3, shape.queries, shape.heads * shape.headDim]);
      expectClose(lowered, layerByLayer, describeShape(shape), { tolerance: 1e-5 });
    }
  });

  it("agrees with PyTorch's attention where the kernel stands aside (FIREBRAND_CPU_BASELINE=avx2)", () => {
    const [own, portable] = [
      childOutputs({ FIREBRAND_CPU_BASELINE: undefined }),
      childOutputs({ FIREBRAND_CPU_BASELINE: 'avx2' }),
    ];
    for (const [index, shape] of shapes.entries()) {
      expectClose(own[index].lowered, portable[index].lowered, describeShape(shape), { tolerance: 1e-5 });
      expect(portable[index].lowered.length).to.equal(3 * shape.queries * shape.heads * shape.headDim);
    }
  });
});
