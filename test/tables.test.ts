// Real tables: a CSV file as pandas.read_csv reads it (header, CRLF, BOM,
// quoting, empty cells, text columns) and preprocessing fitted on the training
// rows as scikit-learn's ColumnTransformer fits it, against the golden file
// scripts/make-table-fixtures.py writes in the sid chroot (sklearn 1.9, pandas).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  Dataset,
  Model,
  nn,
  readCsv,
  Table,
  TablePreprocessor,
  Tensor,
  torch,
  Trainer,
  type TablePreprocessorSpec,
} from '../src';
import { expectClose } from './support/expect-close';
import { rejectionOf } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'tables');
const csvFile = path.join(fixtures, 'passengers.csv');

interface Golden {
  trainRows: number;
  columns: Record<string, { dtype: string; missing: number }>;
  preprocessings: Record<
    string,
    {
      spec: TablePreprocessorSpec;
      featureNames: string[];
      train: number[][];
      new: number[][];
      classes: string[];
      trainTargets: number[];
    }
  >;
}

/** 8 numeric and one-hot features beside an embedded index column: the fields fromTable gives. */
class TabularNet extends nn.Module {
  embedding = nn.embedding(4, 3); // one more row than the 3 classes: the index of an unseen one
  head = nn.linear(11, 2);
  override inputFields(): string[] {
    return ['input', 'categories'];
  }
  forward(input: Tensor, categories: Tensor): Tensor {
    return this.head.forward(torch.cat([input, this.embedding.forward(categories).flatten(1)], 1));
  }
}

const golden = JSON.parse(fs.readFileSync(path.join(fixtures, 'passengers.golden.json'), 'utf8')) as Golden;
const range = (start: number, end: number) => Array.from({ length: end - start }, (_, i) => start + i);

/** The golden rows' columns named `names` (of all `featureNames`), flattened row by row. */
function goldenColumns(rows: number[][], featureNames: string[], names: string[]): number[] {
  const indices = names.map((name) => featureNames.indexOf(name));
  return rows.flatMap((row) => indices.map((index) => row[index]));
}

describe('tables: CSV files and preprocessing, against pandas and scikit-learn', () => {
  let table: Table;
  let train: Table;
  let unseen: Table;
  before(async () => {
    table = await readCsv(csvFile);
    train = table.rows(range(0, golden.trainRows));
    unseen = table.rows(range(golden.trainRows, table.numRows));
  });

  it('reads the file as pandas.read_csv does: the header, each column numbers or text, the same missing cells', () => {
    expect(table.columns).to.deep.equal(Object.keys(golden.columns));
    expect(table.numRows).to.equal(40);
    for (const [name, { dtype, missing }] of Object.entries(golden.columns)) {
      expect(table.kindOf(name), name).to.equal(dtype === 'object' ? 'text' : 'number');
      const column = table.column(name);
      const gaps = Array.from(column as ArrayLike<number | string | null>).filter(
        (cell) => cell === null || (typeof cell === 'number' && Number.isNaN(cell)),
      ).length;
      expect(gaps, `missing cells of ${name}`).to.equal(missing);
    }
    // Quoted commas, doubled quotes and a line break inside quotes, under CRLF line ends and a BOM.
    expect(new Set(table.column('name') as string[]))
      .to.include('Smith, John')
      .and.include('O"Brien, Ann')
      .and.include('Lee\nMin');
  });

  for (const [name, expected] of Object.entries(golden.preprocessings)) {
    it(`fits ${name} on the training rows to ColumnTransformer's features, for them and for new rows`, () => {
      const preprocessor = new TablePreprocessor(expected.spec).fit(train);
      const names = preprocessor.featureNames;
      expect([...(names.input ?? []), ...(names.categories ?? [])].sort()).to.deep.equal(
        [...expected.featureNames].sort(),
      );
      for (const [part, rows] of [
        [train, expected.train],
        [unseen, expected.new],
      ] as const) {
        const fields = preprocessor.transformWithTarget(part);
        for (const field of ['input', 'categories'] as const) {
          if (names[field] === undefined) {
            expect(fields[field], field).to.equal(undefined);
            continue;
          }
          expect(fields[field].shape).to.deep.equal([part.numRows, names[field].length]);
          // float32 features against sklearn's float64; indices exactly.
          expectClose(
            fields[field].data,
            goldenColumns(rows, expected.featureNames, names[field]),
            `${name} ${field}`,
            {
              tolerance: field === 'input' ? 1e-6 : 0,
            },
          );
        }
      }
      expect(preprocessor.classes).to.deep.equal(expected.classes);
      expect(Array.from(preprocessor.transformWithTarget(train).target.data, Number)).to.deep.equal(
        expected.trainTargets,
      );
    });
  }

  it('saves what it fitted as JSON and transforms the same after fromJSON', () => {
    const [first] = Object.values(golden.preprocessings);
    const preprocessor = new TablePreprocessor(first.spec).fit(train);
    const restored = TablePreprocessor.fromJSON(JSON.parse(JSON.stringify(preprocessor)));
    expect(restored.transformWithTarget(unseen)).to.deep.equal(preprocessor.transformWithTarget(unseen));
    expect(restored.featureNames).to.deep.equal(preprocessor.featureNames);
  });

  it('takes JSON records with fields missing, null or empty as the same rows of the file', () => {
    const [first] = Object.values(golden.preprocessings);
    const preprocessor = new TablePreprocessor(first.spec).fit(train);
    const records = range(golden.trainRows, table.numRows).map((row) => {
      const record: Record<string, string | number | null> = {};
      for (const name of ['age', 'fare', 'sex', 'port']) {
        const cell = table.column(name)[row];
        if (cell === null || (typeof cell === 'number' && Number.isNaN(cell))) {
          if (row % 3 === 1) record[name] = null;
          else if (row % 3 === 2) record[name] = '';
        } else {
          record[name] = cell;
        }
      }
      return record;
    });
    expect(preprocessor.transform(Table.fromRecords(records)).input).to.deep.equal(
      preprocessor.transform(unseen).input,
    );
  });

  it('names the file, line and column of a category unseen at fit time, a cell that is no number and a missing value', () => {
    const strict = new TablePreprocessor({ categorical: { columns: ['port'], impute: 'most_frequent' } }).fit(train);
    const unseenError = (() => {
      try {
        strict.transform(unseen);
      } catch (error) {
        return error as Error & { code?: string };
      }
      throw new Error('no error');
    })();
    expect(unseenError.code).to.equal('ERR_FIREBRAND_DATA');
    expect(unseenError.message).to.match(/passengers\.csv, line \d+: column 'port' holds "X", a category unseen/);
    expect(unseenError.message).to.contain('"C", "Q", "S"').and.contain("handleUnknown: 'ignore'");

    const records = Table.fromRecords([{ age: 3 }, { age: 'three' }], 'request');
    expect(() => new TablePreprocessor({ numeric: { columns: ['age'] } }).fit(records)).to.throw(
      'request[1]: column \'age\' holds "three", not a number',
    );
    expect(() => new TablePreprocessor({ numeric: { columns: ['age'] } }).fit(train)).to.throw(
      /passengers\.csv, line \d+: column 'age' is missing a value, and nothing imputes it/,
    );
  });

  it('trains on a table and serves JSON records, preprocessed as the training rows, through trainer.save and Model.load', async () => {
    const { spec } = golden.preprocessings['mean-minmax-missing-category-index'];
    const preprocessor = new TablePreprocessor(spec).fit(train);
    const data = Dataset.fromTable(train, preprocessor);
    expect(data.fieldShapes).to.deep.equal({ input: [8], categories: [1], target: [] });
    const trainer = new Trainer({
      model: new TabularNet(),
      loss: 'cross_entropy',
      optimizer: 'adam',
      config: { progressBar: false, numThreads: 1, seed: 0, batchSize: 8, numEpochs: 2 },
    });
    // The parts of a split keep the preprocessing, so fitting on either is fitting on the same.
    const [fitPart, checkPart] = data.split({ validation: 0.25, seed: 1 });
    await trainer.fit(fitPart, { evalData: checkPart });
    await trainer.fit(fitPart, { numEpochs: 1 });
    const other = Dataset.fromTable(train, new TablePreprocessor(spec).fit(unseen.rows(range(0, 10))));
    expect((await rejectionOf(trainer.fit(other))).message).to.contain('preprocessed otherwise');

    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-table-model-'));
    try {
      await trainer.save(folder);
      const model = await Model.load(folder);
      const records = range(0, unseen.numRows).map((row) =>
        Object.fromEntries(
          ['age', 'fare', 'sex', 'port', 'class'].map((name) => {
            const cell = unseen.column(name)[row];
            return [name, typeof cell === 'number' && Number.isNaN(cell) ? undefined : cell];
          }),
        ),
      );
      const byHand = preprocessor.transform(unseen);
      const expected = await trainer.predict(byHand);
      expect((await model.predict(records)).data).to.deep.equal(expected.data);
      expect((await trainer.predict(records)).data).to.deep.equal(expected.data);
      expect(model.preprocessing?.tablePreprocessor?.classes).to.deep.equal(['no', 'yes']);
      // class 9 is unseen: handleUnknown 'ignore' gives it the index after the last (the embedding's extra row).
      expect((await model.predict([{ age: 30, fare: 10, sex: 'male', port: 'S', class: 9 }])).shape).to.deep.equal([
        1, 2,
      ]);
      // No record has fare: a column of missing values, imputed. A field the model does not take is named.
      expect((await model.predict([{ age: 30, sex: 'male', port: 'S', class: 1 }])).shape).to.deep.equal([1, 2]);
      const typo = await rejectionOf(model.predict([{ Age: 30, sex: 'male' }]));
      expect(typo.message).to.contain("records[0]: field 'Age' is none of the columns taken (did you mean 'age'?)");
      const notANumber = await rejectionOf(model.predict([{ age: 'old', fare: 10, sex: 'male', port: 'S', class: 1 }]));
      expect(notANumber.code).to.equal('ERR_FIREBRAND_DATA');
      expect(notANumber.message).to.contain(`records[0]: column 'age' holds "old", not a number`);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
    const plain = new Trainer({ model: nn.sequential(nn.linear(2, 2)), loss: 'cross_entropy', optimizer: 'sgd' });
    expect((await rejectionOf(plain.predict([{ a: 1 }]))).message).to.contain(
      'got records, but the model was not trained on a table',
    );
  });

  it('splits rows into named parts as random_split picks them: plain, stratified by a label, grouped', () => {
    const ids = (part: Table) => Array.from(part.column('id') as Float64Array);
    const plain = table.split({ validation: 0.25, seed: 3 });
    const [, byDataset] = Dataset.fromFields({ id: { data: table.column('id') as Float64Array, shape: [40] } }).split({
      validation: 0.25,
      seed: 3,
    });
    expect(ids(plain.validation)).to.deep.equal(
      Array.from(byDataset.fields().id.data as Float64Array).sort((a, b) => a - b),
    );
    expect(ids(plain.train).length + ids(plain.validation).length).to.equal(40);

    const labels = (part: Table) => part.column('survived') as string[];
    const count = (values: string[], label: string) => values.filter((value) => value === label).length;
    const stratified = table.split({ validation: 0.25, seed: 3, stratify: 'survived' });
    for (const label of ['no', 'yes']) {
      const all = count(labels(table), label);
      const held = count(labels(stratified.validation), label);
      expect(held, label).to.be.within(Math.floor(all * 0.25), Math.ceil(all * 0.25));
      expect(count(labels(stratified.train), label) + held).to.equal(all);
    }

    const grouped = table.split({ validation: 0.5, seed: 3, groups: 'class' });
    const classes = (part: Table) => new Set(part.column('class') as Float64Array);
    const shared = [...classes(grouped.train)].filter((value) => classes(grouped.validation).has(value));
    expect(shared).to.deep.equal([]);
    expect(grouped.train.numRows + grouped.validation.numRows).to.equal(40);
    expect(() => table.split({ validation: 0.2, stratify: 'survived', groups: 'class' })).to.throw('not both');
    expect(() => table.split({ validation: 0.2, stratify: 'survive' })).to.throw("did you mean 'survived'");
  });

  it('names a column the file lacks with the closest one, and a bad spec by its field', async () => {
    const error = await rejectionOf(readCsv(csvFile, { columns: ['age', 'fair'] }));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.contain("no column 'fair' (did you mean 'fare'?)").and.contain('the columns are id, name');
    expect(() => new TablePreprocessor({ numeric: { columns: ['Age'] } }).fit(train)).to.throw(
      "no column 'Age' (did you mean 'age'?)",
    );
    expect(() => new TablePreprocessor({ numeric: { columns: ['age'], scale: 'robust' as 'none' } })).to.throw(
      "TablePreprocessor.numeric[0].scale: got 'robust', expected one of 'standard', 'minmax', 'none'",
    );
    expect(() => new TablePreprocessor({ numeric: { columns: ['age'] }, categorical: { columns: ['age'] } })).to.throw(
      "column 'age' is in two groups",
    );
    const selected = await readCsv(csvFile, { columns: ['survived', 'age'] });
    expect(selected.columns).to.deep.equal(['survived', 'age']);
  });

  it('names the line of a row with too many cells, and reads LF, CR and BOM-less files alike', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-csv-'));
    try {
      const ragged = path.join(folder, 'ragged.csv');
      fs.writeFileSync(ragged, 'a,b\n1,2\n3,4,5\n');
      const error = await rejectionOf(readCsv(ragged));
      expect(error.code).to.equal('ERR_FIREBRAND_FILE');
      expect(error.message).to.contain(`${ragged}, line 3`);
      for (const [name, text] of [
        ['lf.csv', 'a,b\n1,x\n2,y\n'],
        ['cr.csv', 'a,b\r1,x\r2,y\r'],
        ['crlf-bom.csv', '\ufeffa,b\r\n1,x\r\n2,y\r\n'],
      ]) {
        fs.writeFileSync(path.join(folder, name), text);
        const read = await readCsv(path.join(folder, name));
        expect(read.columns, name).to.deep.equal(['a', 'b']);
        expect(Array.from(read.column('a') as Float64Array), name).to.deep.equal([1, 2]);
        expect(read.column('b'), name).to.deep.equal(['x', 'y']);
      }
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
