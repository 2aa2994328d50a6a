// Learning-rate schedules against PyTorch's own (scripts/make-golden-fixtures.py):
// the learning rate used at every optimizer step must match to double precision.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { SchedulerSpec } from '../src';
import { blobDataset, blobTrainer, rejectionOf, setupError } from './support/helpers';

interface ScheduleCase {
  lr: number;
  lrScheduler: SchedulerSpec;
  lrs: number[];
}

const fixture: {
  torchVersion: string;
  steps: number;
  epochs: number;
  cases: ScheduleCase[];
  plateauMaxModePatience0: number[];
} = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'test', 'fixtures', 'golden-schedules.json'), 'utf8'));

describe(`learning-rate schedules against PyTorch ${fixture.torchVersion}`, () => {
  for (const golden of fixture.cases) {
    it(`${golden.lrScheduler.name} ${JSON.stringify(golden.lrScheduler)}`, async () => {
      const lrs: number[] = [];
      const batchSize = 2;
      const samples = (fixture.steps / fixture.epochs) * batchSize;
      const trainer = blobTrainer(
        { numEpochs: fixture.epochs, batchSize, logEvery: 1 },
        {
          optimizer: { name: 'sgd', lr: golden.lr, momentum: 0.9 },
          lrScheduler: golden.lrScheduler,
          callbacks: [{ onLog: (logs) => lrs.push(logs.learningRate) }],
        },
      );
      await trainer.fit(blobDataset(samples));
      expect(lrs).to.have.length(golden.lrs.length);
      lrs.forEach((lr, step) =>
        expect(lr, `lr at step ${step}`).to.be.closeTo(golden.lrs[step], 1e-12 * Math.max(1, golden.lrs[step])),
      );
    });
  }

  it('steps once per optimizer step when accumulating gradients', async () => {
    const lrs: number[] = [];
    const trainer = blobTrainer(
      { numEpochs: 1, batchSize: 2, gradientAccumulationSteps: 3, logEvery: 1 },
      {
        optimizer: { name: 'sgd', lr: 0.1 },
        lrScheduler: { name: 'exponential', gamma: 0.5 },
        callbacks: [{ onLog: (logs) => lrs.push(logs.learningRate) }],
      },
    );
    await trainer.fit(blobDataset(12)); // 6 micro-batches, 2 optimizer steps
    expect(lrs).to.deep.equal([0.1, 0.05]);
  });

  it('reduce_on_plateau lowers the lr after an epoch without improvement, like PyTorch', async () => {
    const trainer = blobTrainer(
      { numEpochs: 5, batchSize: 16 },
      { lrScheduler: { name: 'reduce_on_plateau', monitor: 'loss', mode: 'max', factor: 0.5, patience: 0 } },
    );
    const history = await trainer.fit(blobDataset(128));
    const losses = history.epochs.map((epoch) => epoch.loss);
    losses.slice(1).forEach((loss, i) => expect(loss, 'the training loss falls every epoch').to.be.below(losses[i]));
    expect(history.epochs.map((epoch) => epoch.learningRate)).to.deep.equal(fixture.plateauMaxModePatience0);
  });

  it('restarts the schedule on every fit', async () => {
    const trainer = blobTrainer({ numEpochs: 1, batchSize: 8 }, { lrScheduler: { name: 'linear' } });
    const first = await trainer.fit(blobDataset(64));
    const second = await trainer.fit(blobDataset(64));
    expect(second.epochs[0].learningRate).to.equal(first.epochs[0].learningRate);
  });

  it('names bad schedules and missing evaluation data', async () => {
    expect((await setupError(() => blobTrainer({}, { lrScheduler: 'cosin' as never }))).message).to.contain(
      "unknown scheduler 'cosin' (did you mean 'cosine'?)",
    );
    expect((await setupError(() => blobTrainer({}, { lrScheduler: { name: 'step' } as never }))).message).to.equal(
      'lrScheduler (step).stepSize: missing, expected an integer >= 1',
    );
    expect(
      (await setupError(() => blobTrainer({}, { lrScheduler: { name: 'multistep', milestones: [5, 2] } }))).message,
    ).to.equal('lrScheduler (multistep).milestones: got [5,2], expected a non-empty list of increasing integers >= 1');
    const adagrad = await setupError(() =>
      blobTrainer({}, { optimizer: 'adagrad', lrScheduler: { name: 'onecycle', maxLr: 0.1 } }),
    );
    expect(adagrad.message).to.contain('cycleMomentum needs an optimizer with a momentum');
    const plateau = blobTrainer({}, { lrScheduler: 'reduce_on_plateau' });
    expect((await rejectionOf(plateau.fit(blobDataset(16)))).message).to.contain(
      "monitors 'valLoss', which needs evalData",
    );
  });
});
