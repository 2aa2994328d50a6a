// Float32 linear layers through oneDNN's inner product (libtorch 2.x) against the
// BLAS path PyTorch eager takes (FIREBRAND_LINEAR_BACKEND=blas): the same training,
// to float32 rounding, with the weights' and biases' gradients and the input's.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { expect } from 'chai';

import { runtimeInfo } from '../src';
import { expectClose } from './support/expect-close';

const src = JSON.stringify(path.join(__dirname, '..', 'src'));
const helpers = JSON.stringify(path.join(__dirname, 'support', 'helpers'));

// Two linear layers wide enough that blocking matters; the first one's input gradient flows from the second.
const script = `
  const { nn, runtimeInfo, Trainer } = require(${src});
  const { blobDataset } = require(${helpers});
  (async () => {
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(96, 160), nn.tanh(), nn.linear(160, 80), nn.tanh(), nn.linear(80, 2)),
      loss: 'cross_entropy',
      optimizer: { name: 'sgd', lr: 0.05 },
      config: { numEpochs: 1, batchSize: 32, progressBar: false, numThreads: 1, seed: 7 },
    });
    await trainer.fit(blobDataset(128, 96));
    const state = await trainer.stateDict();
    const plain = Object.fromEntries(Object.entries(state).map(([k, v]) => [k, { shape: v.shape, data: [...v.data] }]));
    console.log(JSON.stringify({ backend: runtimeInfo().linearBackend, state: plain }));
  })();`;

function train(backend?: 'blas'): { backend: string; state: Record<string, { shape: number[]; data: number[] }> } {
  const env = { ...process.env, FIREBRAND_LINEAR_BACKEND: backend ?? '' };
  const child = spawnSync(process.execPath, ['-e', script], {
    env,
    encoding: 'utf8',
  });
  expect(child.status, child.stderr).to.equal(0);
  return JSON.parse(child.stdout.trim().split('\n').pop() ?? '');
}

describe('float32 linear layers through oneDNN', () => {
  it('is the backend on libtorch 2.x, and FIREBRAND_LINEAR_BACKEND=blas takes the BLAS', function () {
    this.timeout(120000);
    const major = Number(runtimeInfo().torchVersion.split('.')[0]);
    const onednn = train();
    const blas = train('blas');
    expect(onednn.backend).to.equal(major >= 2 ? 'onednn' : 'blas');
    expect(blas.backend).to.equal('blas');
    // Four SGD steps on both paths: the same weights to float32 rounding (each GEMM sums in its own order).
    expect(Object.keys(onednn.state)).to.deep.equal(Object.keys(blas.state));
    for (const [name, tensor] of Object.entries(blas.state)) {
      expect(onednn.state[name].shape, name).to.deep.equal(tensor.shape);
      expectClose(onednn.state[name].data, tensor.data, name, { tolerance: 1e-5 });
    }
  });
});
