// Run by test/inference-lowering.test.ts under oneDNN's verbose mode: a network of one-channel images and the convolutions
// MobileNet is made of (3x3, depthwise, 1x1, each with its BatchNorm folded in) and a 3x3 one without a
// BatchNorm (a plain CNN's, its ReLU run inside it) predicts `argv[2]` times
// on channels-last activations; oneDNN prints a line for each primitive it runs.
import { nn, Trainer } from '../../src';

const calls = Number(process.argv[2]);
const model = nn.sequential(
  nn.conv2d(1, 16, 3, { padding: 1, bias: false }),
  nn.batchNorm2d(16),
  nn.relu(),
  nn.conv2d(16, 16, 3, { padding: 1, groups: 16, bias: false }),
  nn.batchNorm2d(16),
  nn.hardswish(),
  nn.conv2d(16, 24, 1, { bias: false }),
  nn.batchNorm2d(24),
  nn.conv2d(24, 8, 3, { padding: 1 }),
  nn.relu(),
);
const trainer = new Trainer({ model, config: { progressBar: false, numThreads: 1, seed: 3 } });
const inputs = Float32Array.from({ length: 2 * 1 * 12 * 12 }, (_, i) => Math.sin(i * 0.3));
(async () => {
  for (let call = 0; call < calls; call++) await trainer.predict(inputs, [2, 1, 12, 12]);
})();
