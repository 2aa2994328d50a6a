// Options objects refuse keys they do not know, with a did-you-mean, as the
// Trainer's config does: `fit(data, { epochs: 5 })` must not train with the
// default epoch count without a word.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { decodeImage, EarlyStopping, Model, ModelCheckpoint, readCsv } from '../src';
import { blobDataset, blobTrainer, errorOf, rejectionOf } from './support/helpers';

describe('options with unknown names', function () {
  this.timeout(60_000);

  it("refuses fit's, evaluate's, predict's, unfreeze's, initWeightsFrom's and split's unknown options, naming firebrand's own", async () => {
    const trainer = blobTrainer({ numEpochs: 1 });
    const fit = await rejectionOf(trainer.fit(blobDataset(32), { callbacks: [], epochs: 5 } as never));
    expect(fit.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(fit.message).to.equal(
      "fit options: unknown options 'callbacks' (firebrand's name: the Trainer's config (new Trainer({ ..., callbacks }))), " +
        "'epochs' (firebrand's name: 'numEpochs'); the options are evalData, numEpochs, signal, abortGraceMs",
    );
    await trainer.fit(blobDataset(32));
    const evaluate = await rejectionOf(trainer.evaluate(blobDataset(32), { batchSzie: 8 } as never));
    expect(evaluate.message).to.equal(
      "evaluate options: unknown option 'batchSzie' (did you mean 'batchSize'?); the options are batchSize, distributed",
    );
    const predict = await rejectionOf(trainer.predict(new Float32Array(8), [2, 4], { batchsize: 1 } as never));
    expect(predict.message).to.match(/^predict options: unknown option 'batchsize' \(did you mean 'batchSize'\?\)/);
    const unfreeze = await rejectionOf(trainer.unfreeze('0', { learningRate: 1e-3 } as never));
    expect(unfreeze.message).to.match(/^unfreeze options: unknown option 'learningRate'/);
    const initWeights = await rejectionOf(trainer.initWeightsFrom('weights.safetensors', { strcit: false } as never));
    expect(initWeights.message).to.match(
      /^initWeightsFrom options: unknown option 'strcit' \(did you mean 'strict'\?\)/,
    );
    const split = errorOf(() => blobDataset(8).split({ validation: 0.5, seeds: 1 } as never));
    expect(split.message).to.match(/^split options: unknown option 'seeds' \(did you mean 'seed'\?\)/);
  });

  it('refuses Model.load, readCsv, decodeImage and callback options it does not know', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-options-'));
    try {
      const trainer = blobTrainer({ numEpochs: 1 });
      await trainer.fit(blobDataset(32));
      await trainer.save(folder);
      const load = await rejectionOf(Model.load(folder, { devcie: 'cpu' } as never));
      expect(load.message).to.match(/^Model\.load options: unknown option 'devcie' \(did you mean 'device'\?\)/);
      const csv = path.join(folder, 'rows.csv');
      fs.writeFileSync(csv, 'a\n1\n');
      expect((await rejectionOf(readCsv(csv, { delimeter: ';' } as never))).message).to.match(
        /^readCsv options: unknown option 'delimeter' \(did you mean 'delimiter'\?\)/,
      );
      expect((await rejectionOf(decodeImage(new Uint8Array(4), { mdoe: 'RGB' } as never))).message).to.match(
        /^decodeImage options: unknown option 'mdoe' \(did you mean 'mode'\?\)/,
      );
      expect(errorOf(() => new EarlyStopping({ patient: 2 } as never)).message).to.match(
        /^EarlyStopping options: unknown option 'patient' \(did you mean 'patience'\?\)/,
      );
      expect(errorOf(() => new ModelCheckpoint({ dirpath: folder, save_top_k: 2 } as never)).message).to.match(
        /^ModelCheckpoint options: unknown option 'save_top_k' \(did you mean 'saveTopK'\?\)/,
      );
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('says a split fraction out of range as given, naming the part', () => {
    expect(errorOf(() => blobDataset(8).split({ validation: 1.5 })).message).to.equal(
      'split: validation must be a fraction between 0 and 1 (exclusive), got 1.5',
    );
  });
});
