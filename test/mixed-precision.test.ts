// Mixed precision and loss scaling. bf16 autocast on the CPU is checked against
// PyTorch in golden.test.ts; fp16 needs CUDA, so here the GradScaler runs on
// the CPU in fp32, where scaling by powers of two changes no result.
import { expect } from 'chai';

import { Dataset, nn, runtimeInfo, StepLogs, Trainer } from '../src';
import { blobDataset, blobTrainer, makeBlobs, setupError } from './support/helpers';

describe('mixed precision', () => {
  it('refuses fp16 without CUDA instead of training in fp32', async function () {
    if (runtimeInfo().cudaDeviceCount > 0) {
      console.log('      skipped: a CUDA device is present, so fp16 is allowed here');
      this.skip();
    }
    const error = await setupError(() => blobTrainer({ device: 'cpu', mixedPrecision: 'fp16' }));
    expect(error.message).to.equal(
      "mixedPrecision 'fp16' needs a CUDA device (this trainer runs on 'cpu'); use 'bf16' on CPU, or 'no'",
    );
    expect((await setupError(() => blobTrainer({ mixedPrecision: 'fp8' as never }))).message).to.contain(
      "config.mixedPrecision: got 'fp8', expected one of 'no', 'fp16', 'bf16'",
    );
  });

  it('trains in bf16 on the CPU: outputs carry bf16 rounding, accuracy holds', async () => {
    const trainer = blobTrainer({ mixedPrecision: 'bf16', numEpochs: 3 });
    const history = await trainer.fit(blobDataset(256), { evalData: blobDataset(128, 4, 3) });
    expect(history.epochs[2].valAccuracy).to.be.above(0.95);
    const output = await trainer.predict(new Float32Array([0.3, 0.1, -0.2, 0.7]), [1, 4]);
    // A bfloat16 value has 8 significant bits: its float32 bits end in 16 zeros.
    const bits = new Uint32Array(output.data.buffer);
    bits.forEach((word) => expect(word & 0xffff).to.equal(0));
  });

  describe('GradScaler', () => {
    const logsOf = async (gradScaler: object, data: Dataset, config: object = {}) => {
      const logs: StepLogs[] = [];
      const trainer = blobTrainer(
        { numEpochs: 1, batchSize: 8, logEvery: 1, shuffle: false, gradScaler, ...config },
        { callbacks: [{ onLog: (entry) => logs.push(entry) }] },
      );
      const history = await trainer.fit(data);
      return { logs, history };
    };

    it('leaves fp32 training unchanged and grows the scale every growthInterval clean steps', async () => {
      const data = blobDataset(64);
      const plain = await logsOf({}, data);
      const scaled = await logsOf({ enabled: true, initScale: 1024, growthInterval: 3 }, data);
      expect(scaled.logs.map((entry) => entry.loss)).to.deep.equal(plain.logs.map((entry) => entry.loss));
      expect(plain.logs[0].gradScale).to.equal(undefined);
      expect(scaled.logs.map((entry) => entry.gradScale)).to.deep.equal([
        1024, 1024, 2048, 2048, 2048, 4096, 4096, 4096,
      ]);
    });

    it('skips steps whose scaled gradients overflow and backs the scale off', async () => {
      // Targets of 1000 give gradients in the thousands: scaled by 2^120 they overflow float32 until the scale has backed off.
      const { inputs } = makeBlobs(64);
      const data = Dataset.fromArrays({
        inputs,
        inputShape: [64, 4],
        targets: new Float32Array(64 * 2).fill(1000),
        targetShape: [64, 2],
      });
      const logs: StepLogs[] = [];
      const trainer = new Trainer({
        model: nn.sequential(nn.linear(4, 2)),
        loss: 'mse',
        optimizer: { name: 'sgd', lr: 1e-6 },
        config: {
          numEpochs: 1,
          batchSize: 8,
          logEvery: 1,
          progressBar: false,
          numThreads: 1,
          gradScaler: { enabled: true, initScale: 2 ** 120, growthInterval: 100 },
        },
        callbacks: [{ onLog: (entry) => logs.push(entry) }],
      });
      const history = await trainer.fit(data);
      const skipped = history.epochs[0].skippedSteps;
      expect(skipped).to.be.above(0);
      expect(history.epochs[0].optimizerSteps + skipped).to.equal(8);
      expect(logs[logs.length - 1].gradScale).to.equal(2 ** (120 - skipped));
      expect(trainer.globalStep).to.equal(8 - skipped);
      expect(history.epochs[0].loss).to.satisfy(Number.isFinite);
    });

    it('names bad scaler options', async () => {
      expect((await setupError(() => blobTrainer({ gradScaler: { backoffFactor: 2 } }))).message).to.equal(
        'config.gradScaler.backoffFactor: got 2, expected a number in (0, 1]',
      );
      expect((await setupError(() => blobTrainer({ gradScaler: { growthIntervall: 5 } as never }))).message).to.contain(
        "config.gradScaler.growthIntervall: unknown field (did you mean 'growthInterval'?)",
      );
    });
  });
});
