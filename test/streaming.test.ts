// Batches streamed from JavaScript into the C++ epoch: same results as a
// dataset, backpressure, producer errors and early stops.
import { expect } from 'chai';

import { DatasetFields, StreamingDataset, StepLogs } from '../src';
import { blobDataset, blobTrainer, makeBlobs, rejectionOf } from './support/helpers';

const SAMPLES = 64;
const BATCH = 8;

/** The blob data set's batches in order, as plain TypedArrays. */
function* blobBatches(count = SAMPLES / BATCH): Generator<DatasetFields> {
  const { inputs, labels } = makeBlobs(SAMPLES);
  for (let b = 0; b < count; b++) {
    const start = (b * BATCH) % SAMPLES;
    yield {
      input: { data: inputs.slice(start * 4, (start + BATCH) * 4), shape: [BATCH, 4] },
      target: { data: labels.slice(start, start + BATCH), shape: [BATCH] },
    };
  }
}

describe('streaming data from JavaScript', () => {
  it('trains and evaluates to exactly the weights and metrics of the same batches from a Dataset', async () => {
    const config = { numEpochs: 2, batchSize: BATCH, shuffle: false, seed: 5 };
    const fromDataset = blobTrainer(config);
    const datasetHistory = await fromDataset.fit(blobDataset(SAMPLES));
    const fromStream = blobTrainer(config);
    const epochsAsked: number[] = [];
    const stream = new StreamingDataset(
      async function* (epoch) {
        epochsAsked.push(epoch);
        for (const batch of blobBatches()) {
          await new Promise((resolve) => setImmediate(resolve));
          yield batch;
        }
      },
      { batchesPerEpoch: SAMPLES / BATCH },
    );
    const streamHistory = await fromStream.fit(stream, { evalData: new StreamingDataset(() => blobBatches()) });
    expect(epochsAsked).to.deep.equal([0, 1]);
    expect(streamHistory.epochs.map((e) => e.loss)).to.deep.equal(datasetHistory.epochs.map((e) => e.loss));
    expect(await fromStream.stateDict()).to.deep.equal(await fromDataset.stateDict());
    const evaluated = await fromStream.evaluate(new StreamingDataset(() => blobBatches()));
    expect(evaluated.loss).to.equal((await fromDataset.evaluate(blobDataset(SAMPLES), { batchSize: BATCH })).loss);
    expect(streamHistory.epochs[1].valLoss).to.equal(evaluated.loss);
  });

  it('holds a fast producer to the queue depth, and closes its iterator when training stops', async () => {
    let produced = 0;
    let mostAhead = 0;
    let closed = false;
    const reports: StepLogs[] = [];
    const trainer = blobTrainer(
      { numEpochs: 1, batchSize: BATCH, logEvery: 1 },
      {
        callbacks: [
          {
            onLog: (logs, self) => {
              reports.push(logs);
              // Reports reach JS while training goes on, so the stop lands a step or two later.
              if (logs.step === 20) self.stopTraining = true;
            },
          },
        ],
      },
    );
    const stream = new StreamingDataset(
      function* () {
        try {
          for (;;) {
            for (const batch of blobBatches()) {
              produced++;
              // globalStep is read from C++ as it is now. Ahead of it: the queue (3), the batch
              // the epoch holds for its next step, the one training, and this one.
              mostAhead = Math.max(mostAhead, produced - trainer.globalStep);
              yield batch;
            }
          }
        } finally {
          closed = true;
        }
      },
      { queueDepth: 3 },
    );
    const history = await trainer.fit(stream);
    expect(history.stopped).to.equal(true);
    const steps = history.epochs[0].steps;
    expect(steps).to.be.within(20, 30);
    expect(reports[0].stepsInEpoch).to.equal(undefined);
    expect(closed).to.equal(true);
    expect(mostAhead).to.be.at.most(3 + 3);
    expect(produced).to.be.at.most(steps + 3 + 3);
  });

  it("rejects fit with the producer's own error, and names the step of a bad batch", async () => {
    const lost = new Error('cursor lost');
    const failing = new StreamingDataset(async function* () {
      let count = 0;
      for (const batch of blobBatches()) {
        if (++count === 3) throw lost;
        yield batch;
      }
    });
    expect(await rejectionOf(blobTrainer({ batchSize: BATCH }).fit(failing))).to.equal(lost);

    const badShape = new StreamingDataset(function* () {
      const [first] = blobBatches(1);
      yield first;
      yield { input: { data: new Float32Array(BATCH * 3), shape: [BATCH, 3] }, target: first.target };
    });
    const error = await rejectionOf(blobTrainer({ batchSize: BATCH }).fit(badShape));
    expect(error.message).to.contain('epoch 1, step 2: ');
    expect(error.message).to.contain('mat1 and mat2 shapes cannot be multiplied (8x3 and 4x16)');

    const badLabel = new StreamingDataset(function* () {
      const [first] = blobBatches(1);
      yield first;
      yield { input: first.input, target: { data: new Int32Array(BATCH).fill(5), shape: [BATCH] } };
    });
    expect((await rejectionOf(blobTrainer({ batchSize: BATCH }).fit(badLabel))).message).to.equal(
      'epoch 1, step 2: loss (cross_entropy): target label 5 at position 0 of the batch is out of range for a model with 2 outputs (labels must be in [0, 1])',
    );

    const unplanned = blobTrainer({}, { lrScheduler: { name: 'linear', warmupSteps: 2 } });
    expect((await rejectionOf(unplanned.fit(new StreamingDataset(() => blobBatches())))).message).to.equal(
      "lrScheduler (linear) is planned over the run's optimizer steps, which streamed data does not tell; give the stream's batchesPerEpoch",
    );
    expect((await rejectionOf(blobTrainer().fit(new StreamingDataset(() => [])))).message).to.equal(
      'epoch 1, step 1: the data gave no batches',
    );
  });
});
