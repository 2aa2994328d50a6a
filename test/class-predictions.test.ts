// Answers a service returns from a classifier: predictProba (scikit-learn's
// predict_proba: softmax rows, a binary classifier's [P(0), P(1)]),
// predictLabels with the classes saved with the model (top-k with
// probabilities), records with extra fields left out on request, and unseen
// categories counted for drift, on trainer.model and on Model.load alike.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, Model, nn, readCsv, TablePreprocessor, Trainer, type TableRecord, type TensorData } from '../src';
import { expectClose } from './support/expect-close';
import { rejectionOf } from './support/helpers';

const csvFile = path.join(__dirname, '..', '..', 'test', 'fixtures', 'tables', 'passengers.csv');

/** softmax of each row of `logits`, in float64. */
function softmaxRows({ data, shape }: TensorData): number[] {
  const [rows, classes] = shape;
  return Array.from({ length: rows }, (_, row) => {
    const values = Array.from(data.slice(row * classes, (row + 1) * classes), Number);
    const largest = Math.max(...values);
    const sum = values.reduce((total, value) => total + Math.exp(value - largest), 0);
    return values.map((value) => Math.exp(value - largest) / sum);
  }).flat();
}

/** The records of the CSV's rows, with a request id and the target as a service would get them. */
async function requests(): Promise<TableRecord[]> {
  const table = await readCsv(csvFile);
  return table.toRecords().map((record) => ({ ...record, requestId: `r-${record.id}` }));
}

describe('predictProba and predictLabels: class answers with the classes saved with the model', function () {
  this.timeout(60_000);
  let folder: string;
  let trainer: Trainer;
  before(async () => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-classes-'));
    const table = await readCsv(csvFile);
    const preprocessor = new TablePreprocessor({
      numeric: { columns: ['age', 'fare'], impute: 'median' },
      categorical: { columns: ['sex', 'port'], impute: 'most_frequent', handleUnknown: 'ignore' },
      target: 'survived',
    }).fit(table.rows(Array.from({ length: 30 }, (_, i) => i)));
    trainer = new Trainer({
      model: nn.sequential(nn.linear(preprocessor.featureNames.input.length, 8), nn.relu(), nn.linear(8, 2)),
      loss: 'cross_entropy',
      optimizer: { name: 'adam', lr: 0.05 },
      config: { progressBar: false, numThreads: 1, seed: 0, batchSize: 8, numEpochs: 3 },
    });
    await trainer.fit(Dataset.fromTable(table.rows(Array.from({ length: 30 }, (_, i) => i)), preprocessor));
    await trainer.save(folder);
  });
  after(() => fs.rmSync(folder, { recursive: true, force: true }));

  it("gives softmax probabilities and the saved classes' names, the same from trainer.model and Model.load", async () => {
    const records = (await requests()).map(({ age, fare, sex, port }) => ({ age, fare, sex, port }));
    const model = await Model.load(folder);
    const logits = await model.predict(records);
    const probabilities = await model.predictProba(records);
    expect(probabilities.shape).to.deep.equal([40, 2]);
    expectClose(probabilities.data, softmaxRows(logits), 'probabilities', { tolerance: 1e-6 });
    expect(model.classes).to.deep.equal(['no', 'yes']);
    const labels = await model.predictLabels(records);
    const best = Array.from({ length: 40 }, (_, row) =>
      logits.data[2 * row + 1] > logits.data[2 * row] ? 'yes' : 'no',
    );
    expect(labels).to.deep.equal(best);
    expect(await trainer.model.predictLabels(records)).to.deep.equal(labels);
    expect(trainer.model.classes).to.deep.equal(['no', 'yes']);

    const top = await model.predictLabels(records, { topK: 2 });
    top.forEach((ranked, row) => {
      expect(ranked.map(({ label }) => label).sort()).to.deep.equal(['no', 'yes']);
      expect(ranked[0].label).to.equal(labels[row]);
      expect(ranked[0].probability).to.be.at.least(ranked[1].probability);
      expect(ranked[0].probability).to.equal(probabilities.data[2 * row + (labels[row] === 'yes' ? 1 : 0)]);
    });
    const tooMany = await rejectionOf(model.predictLabels(records, { topK: 3 }));
    expect(tooMany.message).to.contain('topK must be a whole number from 1 to the 2 classes, got 3');
  });

  it("leaves out request ids and the target under extraFields: 'ignore', and names them by default", async () => {
    const model = await Model.load(folder);
    const given = await requests();
    const plain = given.map(({ age, fare, sex, port }) => ({ age, fare, sex, port }));
    const extra = await rejectionOf(model.predict(given));
    expect(extra.message).to.contain("records[0]: field 'id' is none of the columns taken");
    expect((await model.predict(given, { extraFields: 'ignore' })).data).to.deep.equal(
      (await model.predict(plain)).data,
    );
    expect(await model.predictLabels(given, { extraFields: 'ignore' })).to.deep.equal(await model.predictLabels(plain));
    const wrong = await rejectionOf(model.predict(given, { extraFields: 'drop' as never }));
    expect(wrong.message).to.contain("extraFields must be 'error' or 'ignore'");
  });

  it('counts the categories the training rows lacked, by column and value, until reset', async () => {
    const model = await Model.load(folder);
    expect(model.unknownCategories).to.deep.equal({});
    const row = { age: 30, fare: 10, sex: 'male', port: 'S' };
    await model.predict([row, { ...row, port: 'X' }, { ...row, port: 'X', sex: 'other' }]);
    await model.predictProba([{ ...row, port: 'Z' }]);
    expect(model.unknownCategories).to.deep.equal({ port: { X: 2, Z: 1 }, sex: { other: 1 } });
    model.resetUnknownCategories();
    expect(model.unknownCategories).to.deep.equal({});
  });
});

describe('predictProba and predictLabels on models without saved classes', () => {
  it("reads one logit a sample as a binary classifier's, [P(0), P(1)], and labels classes by index", async () => {
    const binary = new Trainer({ model: nn.sequential(nn.linear(3, 1)), loss: 'bce_with_logits', optimizer: 'sgd' });
    const inputs = Float32Array.from([0.5, -1, 2, 1, 1, 1, -3, 0, 0.25]);
    const logits = await binary.predict(inputs, [3, 3]);
    const probabilities = await binary.model.predictProba(inputs, [3, 3]);
    expect(probabilities.shape).to.deep.equal([3, 2]);
    const positive = Array.from(logits.data, (logit) => 1 / (1 + Math.exp(-Number(logit))));
    expectClose(
      probabilities.data,
      positive.flatMap((p) => [1 - p, p]),
      'binary probabilities',
      { tolerance: 1e-6 },
    );
    expect(await binary.model.predictLabels(inputs, [3, 3])).to.deep.equal(positive.map((p) => (p > 0.5 ? 1 : 0)));

    const classes = new Trainer({ model: nn.sequential(nn.linear(3, 4)), loss: 'cross_entropy', optimizer: 'sgd' });
    await classes.setup();
    const top = await classes.model.predictLabels(inputs, [3, 3], { topK: 4 });
    expect(top.map((ranked) => ranked.map(({ label }) => label).sort())).to.deep.equal(
      [0, 1, 2].map(() => [0, 1, 2, 3]),
    );
    expect(classes.model.classes).to.equal(undefined);
  });

  it('refuses outputs that are no logits [samples, classes], naming the shape', async () => {
    const sequence = new Trainer({ model: nn.sequential(nn.unflatten(1, [2, 3])), loss: 'mse', optimizer: 'sgd' });
    await sequence.setup();
    const error = await rejectionOf(sequence.model.predictProba(new Float32Array(12), [2, 6]));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.contain('has shape [2, 2, 3]');
  });
});
