// Replays training runs recorded by PyTorch itself (scripts/make-golden-fixtures.py,
// Debian's python3-torch 1.13) and checks firebrand gets the same numbers.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { Dataset, LossSpec, nn, OptimizerSpec, Trainer } from '../src';

interface GoldenCase {
  title: string;
  seed: number;
  optimizer: OptimizerSpec;
  loss: LossSpec;
  epochLosses: number[];
  predictions: number[];
}

interface GoldenFixture {
  torchVersion: string;
  batchSize: number;
  epochs: number;
  features: number;
  classes: number;
  inputs: number[][];
  labels: number[];
  regressionTargets: number[];
  cases: GoldenCase[];
}

const fixture: GoldenFixture = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'test', 'fixtures', 'golden-training.json'), 'utf8'),
);

describe(`agreement with PyTorch ${fixture.torchVersion} (golden fixtures)`, () => {
  const samples = fixture.inputs.length;
  const inputs = new Float32Array(fixture.inputs.flat());

  for (const golden of fixture.cases) {
    it(golden.title, async () => {
      const classification = golden.loss.name === 'cross_entropy';
      const data = classification
        ? Dataset.fromArrays({ inputs, inputShape: [samples, fixture.features], targets: new Int32Array(fixture.labels) })
        : Dataset.fromArrays({
            inputs,
            inputShape: [samples, fixture.features],
            targets: new Float32Array(fixture.regressionTargets.flatMap((value) => Array(fixture.classes).fill(value))),
            targetShape: [samples, fixture.classes],
          });
      const trainer = new Trainer({
        model: nn.sequential(nn.linear(fixture.features, 8), nn.tanh(), nn.linear(8, fixture.classes)),
        loss: golden.loss,
        optimizer: golden.optimizer,
        config: {
          seed: golden.seed,
          numEpochs: fixture.epochs,
          batchSize: fixture.batchSize,
          shuffle: false,
          progressBar: false,
          numThreads: 1,
        },
      });
      const history = await trainer.fit(data);
      history.epochs.forEach((epoch, index) => {
        expect(epoch.loss, `epoch ${index} loss`).to.be.closeTo(golden.epochLosses[index], 1e-5);
      });
      const output = await trainer.predict(inputs.slice(0, 4 * fixture.features), [4, fixture.features]);
      Array.from(output.data).forEach((value, index) => {
        expect(value, `prediction ${index}`).to.be.closeTo(golden.predictions[index], 1e-5);
      });
    });
  }
});
