// A lowered predict pools channels-last maps (average and max) and multiplies them by per-channel gates on firebrand's kernels
// (native/core/nn/channels_last_maps.cpp): the same values as libtorch's ops, to float32 rounding, with the
// AVX2 rows and the portable ones.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { Trainer, type TensorData } from '../src';
import { expectClose } from './support/expect-close';
import { CHANNELS, GateNet, gateInputs, SHAPE, WIDE } from './support/gate-net';

const NAMES = [
  'pooled map',
  'gated map',
  'map times a learned scale',
  'pooled gated map',
  "ResNet stem's max pool",
  'dilated max pool',
  '45-channel max pool',
];

describe("predict's inference lowering: pools and per-channel products of channels-last maps", function () {
  this.timeout(60_000);

  it('agree with libtorch ops run layer by layer, a gate per sample and one for the batch', async () => {
    const trainer = new Trainer({ model: new GateNet(), config: { seed: 4, progressBar: false, numThreads: 1 } });
    const lowered = await trainer.predict<TensorData[]>(gateInputs(), SHAPE);
    const plain = await trainer.predict<TensorData[]>(gateInputs(), SHAPE, { optimizeForInference: false });
    const [batch, , height, width] = SHAPE;
    const shapes = [
      [batch, CHANNELS, 1, 1],
      [batch, CHANNELS, height, width],
      [batch, CHANNELS, height, width],
      [batch, CHANNELS, 1, 1],
      [batch, CHANNELS, 3, 4],
      [batch, CHANNELS, 2, 5],
      [batch, WIDE, 3, 4],
    ];
    for (const [index, name] of NAMES.entries()) {
      expectClose(lowered[index], plain[index], name, { tolerance: 1e-6 });
      expectClose(lowered[index].shape, shapes[index], `${name}'s shape`, { tolerance: 0 });
    }
  });

  for (const baseline of ['1', 'avx2']) {
    it(`agree with them on the rows FIREBRAND_CPU_BASELINE=${baseline} leaves`, () => {
      const child = spawnSync(process.execPath, [path.join(__dirname, 'support', 'gate-child.js')], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
        env: { ...process.env, FIREBRAND_CPU_BASELINE: baseline },
      });
      if (child.status !== 0) throw new Error(child.stderr);
      const { lowered, layerByLayer } = JSON.parse(child.stdout) as Record<string, number[][]>;
      for (const [index, name] of NAMES.entries()) {
        expectClose(lowered[index], layerByLayer[index], name, { tolerance: 1e-6 });
      }
    });
  }
});
