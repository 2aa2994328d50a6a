// EarlyStopping and ModelCheckpoint.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { EarlyStopping, Model, ModelCheckpoint, Timer } from '../src';
import { blobDataset, blobTrainer, rejectionOf } from './support/helpers';

describe('built-in callbacks', () => {
  const evalData = blobDataset(48, 4, 7);

  it('EarlyStopping stops after `patience` epochs without an improvement of minDelta', async () => {
    const stopping = new EarlyStopping({ monitor: 'valLoss', patience: 2, minDelta: 1e-3 });
    const trainer = blobTrainer({ numEpochs: 20 }, { optimizer: { name: 'sgd', lr: 1e-9 }, callbacks: [stopping] });
    const history = await trainer.fit(blobDataset(64), { evalData });
    expect(history.epochs).to.have.length(3);
    expect(history.stopped).to.equal(true);
    expect(stopping.bestEpoch).to.equal(0);
    expect(stopping.stoppedEpoch).to.equal(2);
  });

  it("EarlyStopping restores the best epoch's weights, and names a metric the logs lack", async () => {
    const stopping = new EarlyStopping({ monitor: 'valLoss', patience: 100, restoreBestWeights: true });
    const trainer = blobTrainer(
      { numEpochs: 4 },
      { optimizer: { name: 'sgd', lr: 0.5, momentum: 0.9 }, callbacks: [stopping] },
    );
    const history = await trainer.fit(blobDataset(64), { evalData });
    const best = history.epochs[stopping.bestEpoch as number].valLoss as number;
    expect(Math.min(...history.epochs.map((epoch) => epoch.valLoss as number))).to.equal(best);
    expect((await trainer.evaluate(evalData)).loss).to.be.closeTo(best, 1e-9);

    const blind = blobTrainer({ numEpochs: 1 }, { callbacks: [new EarlyStopping()] });
    expect((await rejectionOf(blind.fit(blobDataset(32)))).message).to.match(
      /^callback postEpoch threw: EarlyStopping: monitors 'valLoss', which the epoch logs do not hold \(they hold epoch, loss, .*accuracy.*\); pass evalData for val\* metrics$/,
    );
  });

  it('ModelCheckpoint keeps the saveTopK best models by the monitor, plus the last, each loadable', async () => {
    const dirpath = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-topk-'));
    const checkpoint = new ModelCheckpoint({
      dirpath,
      monitor: 'valLoss',
      saveTopK: 2,
      saveLast: true,
      filename: 'epoch={epoch}-valLoss={valLoss:.4f}',
    });
    const trainer = blobTrainer(
      { numEpochs: 4 },
      { optimizer: { name: 'sgd', lr: 0.5, momentum: 0.9 }, callbacks: [checkpoint] },
    );
    const history = await trainer.fit(blobDataset(64), { evalData });
    const ranked = history.epochs
      .map((epoch) => ({
        name: `epoch=${epoch.epoch}-valLoss=${(epoch.valLoss as number).toFixed(4)}`,
        loss: epoch.valLoss as number,
      }))
      .sort((a, b) => a.loss - b.loss);
    expect(fs.readdirSync(dirpath).sort()).to.deep.equal(
      [...ranked.slice(0, 2).map((entry) => entry.name), 'last'].sort(),
    );
    expect(checkpoint.bestModelPath).to.equal(path.join(dirpath, ranked[0].name));
    expect(checkpoint.bestScore).to.equal(ranked[0].loss);
    const last = await Model.load(path.join(dirpath, 'last'));
    const probe = new Float32Array([0.5, -1, 2, 0.1]);
    expect(Array.from((await last.predict(probe, [1, 4])).data)).to.deep.equal(
      Array.from((await trainer.predict(probe, [1, 4])).data),
    );
    fs.rmSync(dirpath, { recursive: true });
  });

  it('EarlyStopping and Timer keep their state in checkpoints and take it back on resume', async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-callback-state-'));
    const config = { numEpochs: 3, outputDir, resumeFromCheckpoint: true };
    const first = new EarlyStopping({ patience: 100 });
    await blobTrainer(config, { callbacks: [first, new Timer({ duration: 3600 })] }).fit(blobDataset(64), {
      evalData,
      numEpochs: 2,
    });
    const latest = fs.readFileSync(path.join(outputDir, 'checkpoints', 'latest'), 'utf8').trim();
    const state = JSON.parse(
      fs.readFileSync(path.join(outputDir, 'checkpoints', latest, 'trainer_state.json'), 'utf8'),
    );
    expect(state.callbacks.EarlyStopping).to.deep.include({ bestEpoch: first.bestEpoch });
    expect(state.callbacks.Timer.train).to.be.greaterThan(0);
    const resumed = new EarlyStopping({ patience: 100 });
    const timer = new Timer({ duration: 3600 });
    await blobTrainer(config, { callbacks: [resumed, timer] }).fit(blobDataset(64), { evalData });
    // Resumed counters: the best epoch may be one of the first run's.
    const history = JSON.parse(
      fs.readFileSync(path.join(outputDir, 'checkpoints', 'step-12', 'trainer_state.json'), 'utf8'),
    ).history;
    const losses = history.epochs.map((epoch: { valLoss: number }) => epoch.valLoss);
    expect(resumed.bestEpoch).to.equal(losses.indexOf(Math.min(...losses)));
    expect(timer.timeElapsed('train')).to.be.greaterThan(state.callbacks.Timer.train);
  });
});
