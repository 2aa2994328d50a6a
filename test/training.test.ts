import { expect } from 'chai';

import { Dataset, nn, Trainer } from '../src';
import { blobDataset, blobTrainer, makeBlobs, rejectionOf, seededRandom } from './support/helpers';

describe('training through the public API', () => {
  it('learns a separable classification problem: loss falls and accuracy beats chance', async () => {
    const train = blobDataset(512, 4, 1);
    const test = blobDataset(256, 4, 2);
    const trainer = blobTrainer({ numEpochs: 4 });
    const before = await trainer.evaluate(test);
    const history = await trainer.fit(train, { evalData: test });

    expect(history.epochs).to.have.length(4);
    expect(history.stopped).to.equal(false);
    const losses = history.epochs.map((epoch) => epoch.loss);
    expect(losses[3]).to.be.below(losses[0]);
    expect(history.epochs[3].valLoss).to.be.below(before.loss);
    expect(history.epochs[3].valAccuracy).to.be.above(0.95); // chance is 0.5
    expect(history.epochs[3].steps).to.equal(32);
    expect(history.epochs[3].samples).to.equal(512);
    expect(trainer.globalStep).to.equal(4 * 32);
    const after = await trainer.evaluate(test);
    expect(after.accuracy).to.be.above(0.95);
    expect(after.samples).to.equal(256);
  });

  it('fits a regression with mse, [N, 1] outputs against flat [N] targets', async () => {
    const random = seededRandom(7);
    const samples = 256;
    const inputs = new Float32Array(samples * 2);
    const targets = new Float32Array(samples);
    for (let i = 0; i < samples; i++) {
      inputs[2 * i] = random() * 2 - 1;
      inputs[2 * i + 1] = random() * 2 - 1;
      targets[i] = 3 * inputs[2 * i] - 2 * inputs[2 * i + 1] + 0.5;
    }
    const data = Dataset.fromArrays({ inputs, inputShape: [samples, 2], targets });
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(2, 1)),
      loss: 'mse',
      optimizer: { name: 'adam', lr: 0.05 },
      config: { numEpochs: 30, batchSize: 32, progressBar: false, numThreads: 1 },
    });
    const history = await trainer.fit(data);
    expect(history.epochs[0].accuracy).to.equal(undefined);
    expect(history.epochs[29].loss).to.be.below(0.01);
    expect(history.epochs[29].loss).to.be.below(history.epochs[0].loss / 20);

    const prediction = await trainer.predict(new Float32Array([1, 0, 0, 1]), [2, 2]);
    expect(prediction.shape).to.deep.equal([2, 1]);
    expect(prediction.data[0]).to.be.closeTo(3.5, 0.15);
    expect(prediction.data[1]).to.be.closeTo(-1.5, 0.15);
  });

  it('predicts class scores for every sample, in batches', async () => {
    const trainer = blobTrainer();
    await trainer.fit(blobDataset(256));
    const inputs = new Float32Array([2, 2, 2, 2, -2, -2, -2, -2, 1.5, 1.5, 1.5, 1.5]);
    const output = await trainer.predict(inputs, [3, 4], { batchSize: 2 });
    expect(output.shape).to.deep.equal([3, 2]);
    expect(output.data).to.be.instanceOf(Float32Array);
    const predicted = [0, 1, 2].map((row) => (output.data[2 * row + 1] > output.data[2 * row] ? 1 : 0));
    expect(predicted).to.deep.equal([1, 0, 1]);
  });

  it('gives identical results for the same seed and different ones for another seed', async () => {
    const run = async (seed: number) =>
      (await blobTrainer({ seed, numEpochs: 2 }).fit(blobDataset(128))).epochs.map((e) => e.loss);
    const first = await run(5);
    expect(await run(5)).to.deep.equal(first);
    expect(await run(6)).to.not.deep.equal(first);
  });

  it('reports step progress to callbacks and honours stopTraining from a callback', async () => {
    const logged: number[] = [];
    let progressReports = 0;
    const trainer = blobTrainer(
      { numEpochs: 5, logEvery: 4 },
      {
        callbacks: [
          {
            onProgress: () => progressReports++,
            onLog: (logs) => logged.push(logs.step),
            postEpoch: (epoch, _logs, self) => {
              if (epoch === 1) self.shouldStop = true;
            },
          },
        ],
      },
    );
    const history = await trainer.fit(blobDataset(128));
    expect(history.epochs).to.have.length(2);
    expect(history.stopped).to.equal(true);
    expect(logged.slice(0, 2)).to.deep.equal([4, 8]);
    expect(logged).to.have.length(4);
    expect(progressReports).to.be.at.least(logged.length);
  });

  it('stops mid-epoch, after the current step, when a step callback sets stopTraining', async () => {
    let stopAtLog = true;
    const trainer = blobTrainer(
      { numEpochs: 3, batchSize: 4, logEvery: 5 },
      {
        callbacks: [
          {
            onLog: (_logs, self) => {
              if (stopAtLog) self.stopTraining = true;
            },
          },
        ],
      },
    );
    const history = await trainer.fit(blobDataset(8192));
    expect(history.stopped).to.equal(true);
    expect(history.epochs).to.have.length(1);
    expect(history.epochs[0].steps).to.be.at.least(5).and.below(2048);
    expect(history.epochs[0].valLoss).to.equal(undefined);
    // The next fit of the same trainer starts afresh.
    stopAtLog = false;
    const again = await trainer.fit(blobDataset(64), { numEpochs: 1 });
    expect(again.stopped).to.equal(false);
    expect(again.epochs[0].steps).to.equal(16);
  });

  describe('non-finite losses', () => {
    // 64 samples in batches of 8; samples 20 and 45 are NaN, so steps 3 and 6 of each epoch have a NaN loss.
    function dataWithNaNs(): Dataset {
      const { inputs, labels } = makeBlobs(64);
      inputs[20 * 4] = NaN;
      inputs[45 * 4 + 2] = NaN;
      return Dataset.fromArrays({ inputs, inputShape: [64, 4], targets: labels });
    }
    const probe = new Float32Array([1, 1, 1, 1, -1, -1, -1, -1]);

    it('stops with an error naming the step by default, with no NaN in the weights', async () => {
      const trainer = blobTrainer({ batchSize: 8, shuffle: false });
      const error = await rejectionOf(trainer.fit(dataWithNaNs()));
      expect(error.code).to.equal('ERR_FIREBRAND_NON_FINITE');
      expect(error.message).to.equal(
        'epoch 1, step 3: non-finite loss (nan) at global step 3; the weights were not updated. If the data may hold NaN or Inf, ' +
          "set checkFiniteInputs: true to name the sample. To drop such steps and train on, set nonFiniteLoss: 'skip'",
      );
      expect(trainer.globalStep).to.equal(2);
      const output = await trainer.predict(probe, [2, 4]);
      expect(Array.from(output.data).every(Number.isFinite)).to.equal(true);
    });

    it("drops and counts the steps with 'skip', and trains on", async () => {
      const skipped: number[] = [];
      const trainer = blobTrainer(
        { batchSize: 8, shuffle: false, nonFiniteLoss: 'skip', numEpochs: 2, logEvery: 1 },
        { callbacks: [{ onLog: (logs) => skipped.push(logs.skippedSteps) }] },
      );
      const history = await trainer.fit(dataWithNaNs());
      expect(history.epochs.map((epoch) => epoch.skippedSteps)).to.deep.equal([2, 2]);
      expect(history.epochs.map((epoch) => epoch.optimizerSteps)).to.deep.equal([6, 6]);
      expect(trainer.globalStep).to.equal(12);
      history.epochs.forEach((epoch) => expect(epoch.loss).to.satisfy(Number.isFinite));
      expect(skipped[skipped.length - 1]).to.equal(2);
      const output = await trainer.predict(probe, [2, 4]);
      expect(Array.from(output.data).every(Number.isFinite)).to.equal(true);
    });
  });

  it('steps the optimizer once per accumulation group, with a short last group', async () => {
    const trainer = blobTrainer({ batchSize: 5, gradientAccumulationSteps: 4, numEpochs: 2 });
    const history = await trainer.fit(blobDataset(48));
    // 10 micro-batches per epoch (the last of 3 samples) in groups of 4, 4 and 2.
    expect(history.epochs.map((epoch) => [epoch.steps, epoch.optimizerSteps])).to.deep.equal([
      [10, 3],
      [10, 3],
    ]);
    expect(trainer.globalStep).to.equal(6);
  });

  it('accepts a TensorFlow.js-style callback object and awaits async hooks', async () => {
    const events: string[] = [];
    const trainer = blobTrainer(
      { numEpochs: 2 },
      {
        callbacks: {
          onTrainBegin: (logs) => {
            events.push(`trainBegin:${logs?.numEpochs}`);
          },
          onEpochBegin: async (epoch) => {
            await new Promise((resolve) => setTimeout(resolve, 5));
            events.push(`epochBegin:${epoch}`);
          },
          onEpochEnd: (epoch, logs) => {
            events.push(`epochEnd:${epoch}:${logs?.steps}`);
          },
          onTrainEnd: (logs) => {
            events.push(`trainEnd:${logs?.epoch}`);
          },
        },
      },
    );
    await trainer.fit(blobDataset(64));
    expect(events).to.deep.equal([
      'trainBegin:2',
      'epochBegin:0',
      'epochEnd:0:4',
      'epochBegin:1',
      'epochEnd:1:4',
      'trainEnd:1',
    ]);
  });

  it('builds every layer type the foundation promises and trains through them', async () => {
    const samples = 32;
    const images = Dataset.fromArrays({
      inputs: new Float32Array(samples * 2 * 8 * 8).map((_, i) => Math.sin(i)),
      inputShape: [samples, 2, 8, 8],
      targets: new Int32Array(samples).map((_, i) => i % 3),
    });
    const cnn = new Trainer({
      model: nn.sequential(
        nn.conv2d(2, 4, 3, { padding: 1 }),
        nn.batchNorm2d(4),
        nn.gelu(),
        nn.maxPool2d(2),
        nn.conv2d(4, 4, [3, 3], { stride: 1, padding: [1, 1] }),
        nn.tanh(),
        nn.avgPool2d(2),
        nn.flatten(),
        nn.linear(16, 8),
        nn.batchNorm1d(8),
        nn.layerNorm(8),
        nn.sigmoid(),
        nn.dropout(0.1),
        nn.linear(8, 3),
        nn.softmax(1),
        nn.logSoftmax(1),
      ),
      loss: 'nll',
      optimizer: 'adamw',
      config: { numEpochs: 1, batchSize: 8, progressBar: false, numThreads: 1 },
    });
    const history = await cnn.fit(images);
    expect(history.epochs[0].loss).to.be.a('number').and.satisfy(Number.isFinite);

    const tokens = Dataset.fromArrays({
      inputs: new BigInt64Array(samples * 5).map((_, i) => BigInt(i % 11)),
      inputShape: [samples, 5],
      targets: new Int32Array(samples).map((_, i) => i % 2),
    });
    const embedder = new Trainer({
      model: nn.sequential(nn.embedding(11, 4, { paddingIdx: 0 }), nn.flatten(), nn.relu(), nn.linear(20, 2)),
      loss: { name: 'cross_entropy', labelSmoothing: 0.1 },
      optimizer: { name: 'sgd', lr: 0.05, momentum: 0.9, nesterov: true },
      config: { numEpochs: 1, batchSize: 8, progressBar: false, numThreads: 1 },
    });
    await embedder.setup();
    expect(embedder.parameterCount).to.equal(11 * 4 + 20 * 2 + 2);
    const embedded = await embedder.fit(tokens);
    expect(embedded.epochs[0].loss).to.satisfy(Number.isFinite);
  });
});
