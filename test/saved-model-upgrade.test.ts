// Saved models written before parameterless layers became modules (the folders
// of scripts/make-saved-model-fixtures.ts, kept as written): they load, name
// their weights as before, and predict what they predicted then.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { Model } from '../src';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'saved-models');

interface Expected {
  inputShape: number[];
  inputs: number[];
  output: { shape: number[]; data: number[] };
}

describe('saved models of 0.1.0 (parameterless layers as built-in layers)', () => {
  for (const name of ['sequential-image', 'sequential-activations', 'sequential-sequence', 'module']) {
    it(`${name} loads and predicts as it did`, async () => {
      const folder = path.join(fixtures, name);
      const expected = JSON.parse(fs.readFileSync(path.join(folder, 'expected.json'), 'utf8')) as Expected;
      const model = await Model.load(folder);
      const prediction = await model.predict(Float32Array.from(expected.inputs), expected.inputShape);
      expect(prediction.shape).to.deep.equal(expected.output.shape);
      const worst = Math.max(...expected.output.data.map((value, i) => Math.abs(value - Number(prediction.data[i]))));
      expect(worst, `largest difference in ${name}`).to.be.below(1e-6);
    });
  }
});
