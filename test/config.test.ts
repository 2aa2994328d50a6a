// TrainerConfig: validation of every field at once, JSON files, and the run
// limits and evaluation schedule it sets.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { defaultConfig, loadConfig } from '../src';
import { configSchema } from '../src/training/config-schema';
import { blobDataset, blobTrainer, errorOf } from './support/helpers';

describe('trainer config', () => {
  it('has a rule for every field and a default for every field', () => {
    expect(Object.keys(configSchema).sort()).to.deep.equal(Object.keys(defaultConfig()).sort());
  });

  it('lists every bad field at once, by path, with the value and what was expected', () => {
    const error = errorOf(() =>
      blobTrainer({
        batchSize: 0,
        shufle: true,
        gradScaler: { initScale: -1 },
        nonFiniteLoss: 'ignore',
        evalEvery: 'step',
      } as never),
    );
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.equal(
      [
        'config has 5 problems:',
        '  config.batchSize: got 0, expected an integer >= 1',
        "  config.shufle: unknown field (did you mean 'shuffle'?)",
        '  config.gradScaler.initScale: got -1, expected a finite number > 0',
        "  config.nonFiniteLoss: got 'ignore', expected one of 'error', 'skip'",
        "  config.evalEvery: got 'step', expected an integer >= 1 or 'epoch'",
      ].join('\n'),
    );
    expect(errorOf(() => blobTrainer({ numWorkers: 100 })).message).to.equal(
      "config.numWorkers: got 100, expected an integer in [0, 64] or 'auto'",
    );
  });

  it('loads a config from a JSON file, naming the file in its errors', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-config-'));
    const good = path.join(dir, 'good.json');
    fs.writeFileSync(good, JSON.stringify({ batchSize: 8, metrics: ['accuracy'], gradScaler: { growthInterval: 10 } }));
    expect(loadConfig(good)).to.deep.equal({ batchSize: 8, metrics: ['accuracy'], gradScaler: { growthInterval: 10 } });
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ batchSize: 'big', seeds: 1 }));
    expect(errorOf(() => loadConfig(bad)).message).to.equal(
      `${bad} has 2 problems:\n  ${bad}.batchSize: got 'big', expected an integer >= 1\n  ${bad}.seeds: unknown field (did you mean 'seed'?)`,
    );
    const broken = path.join(dir, 'broken.json');
    fs.writeFileSync(broken, '{ "batchSize": ');
    expect(errorOf(() => loadConfig(broken)).message).to.match(new RegExp(`^${broken}: not valid JSON`));
    fs.rmSync(dir, { recursive: true });
  });

  it('stops at maxSteps (and plans the schedule over them) or after maxTime', async () => {
    const limited = blobTrainer({ numEpochs: 5, maxSteps: 11, batchSize: 16 }, { lrScheduler: { name: 'linear' } });
    const history = await limited.fit(blobDataset(64));
    expect(limited.globalStep).to.equal(11);
    expect(history.epochs.map((epoch) => epoch.steps)).to.deep.equal([4, 4, 3]);
    expect(history.stopped).to.equal(false);
    expect(history.epochs[2].learningRate).to.be.closeTo(0.1 / 11, 1e-12);

    const timed = blobTrainer({ numEpochs: 1000, maxTime: 0.3, batchSize: 16 });
    const started = Date.now();
    const timedHistory = await timed.fit(blobDataset(64));
    expect(timedHistory.stopped).to.equal(true);
    expect(Date.now() - started).to.be.below(5000);
  });

  it('evaluates every evalEvery steps as well as at epoch ends, and can load the best weights at the end', async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-best-'));
    const trainer = blobTrainer({
      numEpochs: 3,
      batchSize: 16,
      evalEvery: 3,
      outputDir,
      metricForBestModel: 'valLoss',
      loadBestModelAtEnd: true,
    });
    const evalData = blobDataset(32, 4, 5);
    const history = await trainer.fit(blobDataset(64), { evalData });
    // Step 12 ends the last epoch, whose own evaluation is in history.epochs.
    expect(history.evaluations.map((entry) => entry.globalStep)).to.deep.equal([3, 6, 9]);
    expect(history.evaluations.every((entry) => Number.isFinite(entry.valLoss))).to.equal(true);
    const best = Math.min(...history.epochs.map((epoch) => epoch.valLoss ?? Infinity));
    expect((await trainer.evaluate(evalData)).loss).to.be.closeTo(best, 1e-9);
    fs.rmSync(outputDir, { recursive: true });
  });

  it('initialises weights from config.initWeightsFrom before the first fit', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-init-'));
    const source = blobTrainer({ numEpochs: 2 });
    await source.fit(blobDataset(64));
    await source.save(path.join(dir, 'model'));
    const target = blobTrainer(
      { numEpochs: 1, initWeightsFrom: path.join(dir, 'model', 'model.safetensors') },
      { optimizer: { name: 'sgd', lr: 1e-12 } },
    );
    await target.fit(blobDataset(64));
    const loaded = await target.stateDict();
    for (const [name, tensor] of Object.entries(await source.stateDict())) {
      Array.from(tensor.data as Float32Array).forEach((value, i) =>
        expect((loaded[name].data as Float32Array)[i], name).to.be.closeTo(value, 1e-6),
      );
    }
    fs.rmSync(dir, { recursive: true });
  });
});
