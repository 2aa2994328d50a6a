// The lifecycle: hook order, the subclass style, per-batch hooks (stop, LR,
// save, errors), and what callbacks can ask of the trainer.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  BatchInfo,
  BatchResult,
  Callback,
  DataloaderConfiguration,
  LearningRateMonitor,
  Logger,
  ModelConfiguration,
  nn,
  OptimizerConfiguration,
  ScalarMetrics,
  Timer,
  Trainer,
} from '../src';
import { blobDataset, blobTrainer, rejectionOf } from './support/helpers';

const LIFECYCLE_HOOKS = [
  'preLaunch',
  'preConfigure',
  'postConfigure',
  'preSetup',
  'postSetup',
  'preFit',
  'preEpoch',
  'preTrainBatch',
  'postTrainBatch',
  'preValidation',
  'preValBatch',
  'postValBatch',
  'postValidation',
  'postEpoch',
  'postFit',
  'onException',
  'onSaveCheckpoint',
  'onLoadCheckpoint',
] as const;

/** A callback recording every lifecycle hook it sees, batch hooks with their batch index. */
function recorder(events: string[]): Callback {
  const callback: Record<string, unknown> = {};
  for (const name of LIFECYCLE_HOOKS) {
    callback[name] = (first: unknown) => {
      const batch = (first as BatchInfo | undefined)?.batch;
      events.push(name.endsWith('Batch') ? `${name}:${batch}` : name);
    };
  }
  return callback as Callback;
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-lifecycle-'));
}

class BlobTrainer extends Trainer {
  readonly seen: string[] = [];

  override configureModels(): ModelConfiguration {
    return { model: nn.sequential(nn.linear(4, 16), nn.relu(), nn.linear(16, 2)), loss: 'cross_entropy' };
  }

  override configureOptimizers(): OptimizerConfiguration {
    return { optimizer: { name: 'sgd', lr: 0.1, momentum: 0.9 } };
  }

  override configureDataloaders(): DataloaderConfiguration {
    return { train: blobDataset(64), eval: blobDataset(32, 4, 7) };
  }

  override preEpoch(epoch: number): void {
    this.seen.push(`preEpoch:${epoch}`);
  }

  override postValidation(logs: { valLoss: number }): void {
    this.seen.push(`postValidation:${logs.valLoss.toFixed(3)}`);
  }
}

describe('lifecycle', () => {
  it('calls every hook, in Dream Trainer order, per-batch ones for each batch', async () => {
    const events: string[] = [];
    const trainer = blobTrainer(
      { numEpochs: 1, batchSize: 16, outputDir: tempDir() },
      { callbacks: [recorder(events)] },
    );
    await trainer.fit(blobDataset(32), { evalData: blobDataset(16, 4, 3) });
    expect(events).to.deep.equal([
      'preLaunch',
      'preConfigure',
      'postConfigure',
      'preSetup',
      'postSetup',
      'preFit',
      'preEpoch',
      'preTrainBatch:0',
      'postTrainBatch:0',
      'preTrainBatch:1',
      'postTrainBatch:1',
      'preValidation',
      'preValBatch:0',
      'postValBatch:0',
      'postValidation',
      'postEpoch',
      'onSaveCheckpoint',
      'postFit',
    ]);
    // Setup runs once: a second fit starts at preFit.
    events.length = 0;
    await trainer.fit(blobDataset(16), { numEpochs: 1 });
    expect(events[0]).to.equal('preFit');
  });

  it('gives the subclass style the same results as the functional one', async () => {
    const subclass = new BlobTrainer({ config: { numEpochs: 2, batchSize: 16, progressBar: false, numThreads: 1 } });
    const history = await subclass.fit();
    const functional = blobTrainer({ numEpochs: 2, batchSize: 16 });
    const reference = await functional.fit(blobDataset(64), { evalData: blobDataset(32, 4, 7) });
    expect(history.epochs.map((epoch) => epoch.valLoss)).to.deep.equal(reference.epochs.map((epoch) => epoch.valLoss));
    expect(await subclass.stateDict()).to.deep.equal(await functional.stateDict());
    expect(subclass.seen).to.deep.equal([
      'preEpoch:0',
      `postValidation:${(history.epochs[0].valLoss as number).toFixed(3)}`,
      'preEpoch:1',
      `postValidation:${(history.epochs[1].valLoss as number).toFixed(3)}`,
    ]);
    expect((await subclass.evaluate()).loss).to.equal(history.epochs[1].valLoss);
  });

  it('says what is missing when neither options nor a subclass give a model or data', async () => {
    const noModel = await rejectionOf(new Trainer({ config: { progressBar: false } }).fit(blobDataset(16)));
    expect(noModel.message).to.contain('give options.model, or override configureModels()');
    const noData = await rejectionOf(blobTrainer().fit());
    expect(noData.message).to.contain('fit: give trainData, or return { train } from configureDataloaders()');
    expect(() => new BlobTrainer({ config: { progressBar: false } }).parameterCount).to.throw(
      /the model is not known yet: configureModels\(\) builds it at setup; await trainer.setup\(\) first/,
    );
  });

  it('waits for async per-batch hooks, and stops after the batch that set shouldStop', async () => {
    const order: string[] = [];
    const trainer = blobTrainer(
      { numEpochs: 5, batchSize: 8 },
      {
        callbacks: {
          async postTrainBatch(batch: BatchResult, self: Trainer) {
            await new Promise((resolve) => setTimeout(resolve, 2));
            order.push(`${batch.batch}:${batch.globalStep}`);
            expect(batch.loss).to.be.a('number').and.to.be.greaterThan(0);
            if (batch.batch === 2) self.shouldStop = true;
          },
        },
      },
    );
    const history = await trainer.fit(blobDataset(64));
    expect(order).to.deep.equal(['0:1', '1:2', '2:3']);
    expect(trainer.globalStep).to.equal(3);
    expect(history.stopped).to.equal(true);
  });

  it('takes TensorFlow.js onBatchBegin/onBatchEnd with batch logs', async () => {
    const seen: string[] = [];
    const trainer = blobTrainer(
      { numEpochs: 1, batchSize: 10 },
      {
        callbacks: {
          onBatchBegin: (batch, logs) => {
            seen.push(`begin ${batch} ${logs?.size}`);
          },
          onBatchEnd: (batch, logs) => {
            seen.push(`end ${batch} ${typeof logs?.loss}`);
          },
        },
      },
    );
    await trainer.fit(blobDataset(25));
    expect(seen).to.deep.equal([
      'begin 0 10',
      'end 0 number',
      'begin 1 10',
      'end 1 number',
      'begin 2 5',
      'end 2 number',
    ]);
  });

  it("rejects with the per-batch hook's error, after onException, and can fit again", async () => {
    let failAt: number | undefined = 3;
    const exceptions: string[] = [];
    const trainer = blobTrainer(
      { numEpochs: 1, batchSize: 8 },
      {
        callbacks: {
          preTrainBatch: (batch) => {
            if (batch.batch === failAt) throw new Error('bad batch');
          },
          onException: (error) => {
            exceptions.push((error as Error).message);
          },
        },
      },
    );
    const error = (await rejectionOf(trainer.fit(blobDataset(64)))) as Error & {
      code?: string;
      hook?: string;
      cause?: Error;
    };
    expect(error.code).to.equal('ERR_FIREBRAND_CALLBACK');
    expect(error.hook).to.equal('preTrainBatch');
    expect(error.message).to.equal('callback preTrainBatch threw: bad batch');
    expect(error.cause?.message).to.equal('bad batch');
    expect(exceptions).to.deep.equal([error.message]);
    expect(trainer.globalStep).to.equal(3);
    failAt = undefined;
    const history = await trainer.fit(blobDataset(64));
    expect(history.epochs[0].optimizerSteps).to.equal(8);
    expect(Number.isFinite(history.epochs[0].loss)).to.equal(true);
  });

  it('lets a callback change the learning rate from the next optimizer step, kept by later fits', async () => {
    const rates: number[] = [];
    const trainer = blobTrainer(
      { numEpochs: 1, batchSize: 8, logEvery: 1 },
      {
        optimizer: { name: 'sgd', lr: 0.1 },
        callbacks: {
          postTrainBatch: (batch, self) => {
            if (batch.batch === 1) self.setLearningRate(0.02);
          },
          onLog: (logs) => rates.push(logs.learningRate),
        },
      },
    );
    await trainer.fit(blobDataset(32));
    expect(rates).to.deep.equal([0.1, 0.1, 0.02, 0.02]);
    expect(trainer.learningRates).to.deep.equal([0.02]);
    trainer.setLearningRate(0.5);
    expect(trainer.learningRates).to.deep.equal([0.5]);
    rates.length = 0;
    await trainer.fit(blobDataset(16));
    expect(rates).to.deep.equal([0.5, 0.5]);
    expect(() => trainer.setLearningRate(-1)).to.throw('setLearningRate.lr: got -1, expected a number >= 0');
    expect(() => trainer.setLearningRate(0.1, 'generator')).to.throw(/no optimizer is named 'generator'/);
  });

  it('scales a schedule by a set learning rate, and keeps the scale in checkpoints', async () => {
    const outputDir = tempDir();
    const make = () =>
      blobTrainer(
        { numEpochs: 2, batchSize: 8, outputDir, resumeFromCheckpoint: true },
        { optimizer: { name: 'sgd', lr: 0.1 }, lrScheduler: { name: 'step', stepSize: 4, gamma: 0.5 } },
      );
    const first = make();
    await first.setup();
    first.setLearningRate(1);
    await first.fit(blobDataset(32), { numEpochs: 1 });
    expect(first.learningRates).to.deep.equal([0.5]);
    const resumed = make();
    await resumed.fit(blobDataset(32));
    // 8 steps: 1 * 0.5^2 from step 8 on.
    expect(resumed.learningRates).to.deep.equal([0.25]);
  });

  it('saves a checkpoint when a callback asks, mid-epoch', async () => {
    const outputDir = tempDir();
    const trainer = blobTrainer(
      { numEpochs: 1, batchSize: 8, outputDir },
      {
        callbacks: {
          postTrainBatch: (batch, self) => {
            if (batch.batch === 2) self.requestSave();
          },
        },
      },
    );
    const history = await trainer.fit(blobDataset(64));
    expect(history.epochs[0].optimizerSteps).to.equal(8);
    const saved = fs.readdirSync(path.join(outputDir, 'checkpoints')).filter((name) => name.startsWith('step-'));
    expect(saved.sort()).to.deep.equal(['step-3', 'step-8']);
    const state = JSON.parse(
      fs.readFileSync(path.join(outputDir, 'checkpoints', 'step-3', 'trainer_state.json'), 'utf8'),
    );
    expect(state).to.include({ globalStep: 3, batchInEpoch: 3, interrupted: false });
    expect(() => blobTrainer().requestSave()).to.throw(/checkpoints need config.outputDir/);
  });

  it('resolves fit with the best metric, wall time and throughput', async () => {
    const trainer = blobTrainer({ numEpochs: 3 });
    const history = await trainer.fit(blobDataset(64), { evalData: blobDataset(32, 4, 7) });
    const losses = history.epochs.map((epoch) => epoch.valLoss as number);
    const bestEpoch = losses.indexOf(Math.min(...losses));
    expect(history.best).to.deep.include({
      metric: 'valLoss',
      value: losses[bestEpoch],
      epoch: bestEpoch,
      globalStep: 4 * (bestEpoch + 1),
    });
    expect(history.wallTimeSeconds).to.be.greaterThan(0);
    expect(history.samplesPerSecond).to.be.greaterThan(0);
  });
});

describe('LearningRateMonitor and Timer', () => {
  it("LearningRateMonitor logs every optimizer group's rate by name", async () => {
    const logged: { metrics: ScalarMetrics; step: number }[] = [];
    const logger: Logger = { logMetrics: (metrics, step) => logged.push({ metrics, step }) };
    const monitor = new LearningRateMonitor();
    const trainer = blobTrainer(
      { numEpochs: 1, batchSize: 8, logEvery: 2 },
      {
        optimizer: { name: 'adamw', lr: 0.01, paramGroups: [{ params: ['0.'], lr: 0.001 }] },
        lrScheduler: { name: 'step', stepSize: 2, gamma: 0.1 },
        callbacks: [monitor],
        loggers: [logger],
      },
    );
    await trainer.fit(blobDataset(32));
    expect(trainer.learningRateNames).to.deep.equal(['adamw/pg0', 'adamw/pg1']);
    const lrLogs = logged.filter((entry) => 'lr-adamw/pg0' in entry.metrics);
    expect(lrLogs.map((entry) => entry.step)).to.deep.equal([2, 4]);
    expect(lrLogs[0].metrics['lr-adamw/pg0']).to.be.closeTo(0.0001, 1e-12);
    expect(lrLogs[0].metrics['lr-adamw/pg1']).to.be.closeTo(0.001, 1e-12);
    expect(monitor.lrs['lr-adamw/pg0']).to.have.length(2);
  });

  it('Timer stops training once its duration is spent, within a progress report', async () => {
    const timer = new Timer({ duration: 0.3 });
    const trainer = blobTrainer({ numEpochs: 10_000, batchSize: 4 }, { callbacks: [timer] });
    const started = Date.now();
    const history = await trainer.fit(blobDataset(4096));
    const seconds = (Date.now() - started) / 1000;
    expect(history.stopped).to.equal(true);
    expect(timer.timeElapsed('train')).to.be.at.least(0.3);
    expect(seconds).to.be.below(3);
    expect(() => new Timer({ duration: '1:2:3' })).to.throw(/'DD:HH:MM:SS'/);
    expect(new Timer({ duration: '00:01:00:30' }).duration).to.equal(3630);
  });

  it('config.maxTime works through a Timer', async () => {
    const trainer = blobTrainer({ numEpochs: 10_000, batchSize: 4, maxTime: 0.3 });
    expect(trainer.callbacks.some((callback) => callback instanceof Timer)).to.equal(true);
    const history = await trainer.fit(blobDataset(4096));
    expect(history.stopped).to.equal(true);
  });
});

describe('a trainer made only to predict, evaluate and generate', () => {
  it('makes a trainer without loss or optimizer to predict, evaluate and generate, and fit says what it lacks', async () => {
    const model = nn.sequential(nn.linear(4, 2));
    const bare = new Trainer({ model, config: { progressBar: false } });
    const prediction = await bare.predict(new Float32Array(8), [2, 4]);
    expect(prediction.shape).to.deep.equal([2, 2]);
    expect((await rejectionOf(bare.fit(blobDataset(8)))).message).to.equal(
      'loss: needed to train, since the model defines no training_step',
    );
    const scored = new Trainer({ model, loss: 'cross_entropy', config: { progressBar: false } });
    expect(Number.isFinite((await scored.evaluate(blobDataset(8))).loss)).to.equal(true);
    const fit = await rejectionOf(scored.fit(blobDataset(8)));
    expect(fit.code).to.equal('ERR_FIREBRAND_INVALID_STATE');
    expect(fit.message).to.match(
      /^fit: the trainer has no optimizer, so it was made to predict, evaluate and generate only/,
    );
  });
});
