// Run by test/inference-lowering.test.ts under oneDNN's verbose mode: a network of one-channel images and the convolutions
// MobileNet is made of (3x3, depthwise, 1x1, each with its BatchNorm folded in, and its ReLU or Hardswish run
// inside it), a 3x3 one without a BatchNorm (a plain CNN's), a strided, dilated, grouped one whose last window
// would pass the padding (left out), and a 1x1 one before a Hardsigmoid (MobileNetV3's gates), predicts `argv[2]` times on channels-last activations; oneDNN prints
// a line for each primitive it runs. With `argv[3]` = 'sizes', batches of 3, 5 and 3 follow; with 'outputs', a batch of 2 and one of 3 predict as lowered
// and as written, and their outputs are printed as JSON.
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
  nn.conv2d(8, 8, 3, { stride: 2, padding: 1, dilation: 2, groups: 2 }),
  nn.relu(),
  nn.conv2d(8, 4, 1),
  nn.hardsigmoid(),
);
const trainer = new Trainer({ model, config: { progressBar: false, numThreads: 1, seed: 3 } });
const inputsOf = (batch: number) => Float32Array.from({ length: batch * 1 * 12 * 12 }, (_, i) => Math.sin(i * 0.3));
(async () => {
  for (let call = 0; call < calls; call++) await trainer.predict(inputsOf(2), [2, 1, 12, 12]);
  if (process.argv[3] === 'sizes') {
    for (const batch of [3, 5, 3]) await trainer.predict(inputsOf(batch), [batch, 1, 12, 12]);
  }
  if (process.argv[3] !== 'outputs') return;
  const outputs: Record<string, number[]> = {};
  for (const batch of [2, 3]) {
    for (const lowered of [true, false]) {
      const { data } = await trainer.predict(inputsOf(batch), [batch, 1, 12, 12], { optimizeForInference: lowered });
      outputs[`${batch} ${lowered ? 'lowered' : 'as written'}`] = Array.from(data as Float32Array);
    }
  }
  console.log(JSON.stringify(outputs));
})();
