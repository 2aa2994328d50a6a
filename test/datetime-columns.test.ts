// Date/time columns as a TablePreprocessor group: each text's calendar parts
// equal pandas.Timestamp's (golden from scripts/make-datetime-fixtures.py,
// leap days, centuries, before 1970, written offsets), the year standardized
// and cyclic parts as sine and cosine; saved with the model, and computed
// again inside the exported ONNX file from float64 seconds, equal to predict.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';

import {
  Dataset,
  datetimeSeconds,
  Model,
  nn,
  Table,
  TablePreprocessor,
  Trainer,
  type DatetimePart,
  type TableRecord,
} from '../src';
import { expectClose } from './support/expect-close';
import { errorOf } from './support/helpers';

type Parts = Record<DatetimePart, number>;
const golden = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'test', 'fixtures', 'tables', 'datetime-parts.golden.json'), 'utf8'),
) as { rows: ({ text: string } & Parts)[] };

const ALL_PARTS: DatetimePart[] = ['year', 'month', 'day', 'dayOfWeek', 'dayOfYear', 'hour', 'minute'];
const CYCLE: Record<string, [number, number]> = {
  month: [12, 1],
  day: [31, 1],
  dayOfWeek: [7, 0],
  dayOfYear: [365, 1],
  hour: [24, 0],
  minute: [60, 0],
};

/** The features the docs define, from pandas' parts: the year standardized, each other part's sine and cosine. */
function expectedFeatures(rows: Parts[]): number[] {
  const years = rows.map((row) => row.year);
  const mean = years.reduce((sum, year) => sum + year, 0) / years.length;
  const std = Math.sqrt(years.reduce((sum, year) => sum + (year - mean) ** 2, 0) / years.length);
  return rows.flatMap((row) =>
    ALL_PARTS.flatMap((part) => {
      if (part === 'year') return [(row.year - mean) / std];
      const [period, start] = CYCLE[part];
      const angle = (row[part] - start) * ((2 * Math.PI) / period);
      return [Math.sin(angle), Math.cos(angle)];
    }),
  );
}

const records = (): TableRecord[] =>
  golden.rows.map(({ text }, row) => ({ when: text, amount: row * 1.5, label: row % 2 === 0 ? 'even' : 'odd' }));

describe('TablePreprocessor datetime groups: calendar parts as features, in predict and in ONNX', function () {
  this.timeout(120_000);

  it("gives each text's parts as pandas.Timestamp does, as a standardized year and sine/cosine pairs", () => {
    const table = Table.fromRecords(records());
    const preprocessor = new TablePreprocessor({ datetime: { columns: ['when'], parts: ALL_PARTS } }).fit(table);
    const { input } = preprocessor.transform(table);
    expect(input.shape).to.deep.equal([golden.rows.length, 13]);
    expectClose(input.data, expectedFeatures(golden.rows), 'datetime features', { tolerance: 1e-6 });
    expect(preprocessor.featureNames.input.slice(0, 3)).to.deep.equal([
      'dt__when_year',
      'dt__when_month_sin',
      'dt__when_month_cos',
    ]);
    // The default parts: year, month, day of week, day of year.
    const defaults = new TablePreprocessor({ datetime: { columns: ['when'] } }).fit(table);
    expect(defaults.featureNames.input).to.deep.equal([
      'dt__when_year',
      'dt__when_month_sin',
      'dt__when_month_cos',
      'dt__when_dayOfWeek_sin',
      'dt__when_dayOfWeek_cos',
      'dt__when_dayOfYear_sin',
      'dt__when_dayOfYear_cos',
    ]);
  });

  it('refuses cells that are no date, naming the row and column, and parts it does not know', () => {
    const fit = (when: unknown) => () =>
      new TablePreprocessor({ datetime: { columns: ['when'] } }).fit(
        Table.fromRecords([{ when: '2024-01-01' }, { when } as TableRecord]),
      );
    expect(errorOf(fit('2023-02-29')).message).to.match(/records\[1\]: column 'when' holds "2023-02-29".*ISO 8601/);
    expect(errorOf(fit('01/02/2024')).message).to.contain('holds "01/02/2024"');
    expect(errorOf(fit(null)).message).to.contain("column 'when' is missing a value");
    expect(errorOf(fit('2024-01-01T24:00')).message).to.contain('holds "2024-01-01T24:00"');
    const wrongPart = errorOf(
      () => new TablePreprocessor({ datetime: { columns: ['when'], parts: ['weekday' as DatetimePart] } }),
    );
    expect(wrongPart.message).to.contain('TablePreprocessor.datetime[0].parts');
    expect(datetimeSeconds('1969-12-31T23:00:00')).to.equal(-3600);
    expect(datetimeSeconds('2024-03-10T08:30:00+05:30')).to.equal(datetimeSeconds('2024-03-10T08:30:00Z'));
  });

  it('travels with the model: Model.load predicts records as the trainer did, and the ONNX file as predict', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-datetime-'));
    try {
      const table = Table.fromRecords(records());
      const preprocessor = new TablePreprocessor({
        numeric: { columns: ['amount'] },
        datetime: { columns: ['when'], parts: ALL_PARTS },
        target: 'label',
      }).fit(table);
      const trainer = new Trainer({
        model: nn.sequential(nn.linear(14, 8), nn.tanh(), nn.linear(8, 2)),
        loss: 'cross_entropy',
        optimizer: { name: 'adam', lr: 0.01 },
        config: { numEpochs: 2, batchSize: 4, progressBar: false, numThreads: 1, seed: 0 },
      });
      await trainer.fit(Dataset.fromTable(table, preprocessor));
      const requests = records().map(({ when, amount }) => ({ when, amount }));
      const expected = await trainer.predict(requests);
      await trainer.save(folder);
      const saved = JSON.parse(fs.readFileSync(path.join(folder, 'preprocessing.json'), 'utf8'));
      expect(saved.table.datetime[0].columns.parts).to.deep.equal(ALL_PARTS);
      const loaded = await Model.load(folder);
      expect(Array.from((await loaded.predict(requests)).data)).to.deep.equal(Array.from(expected.data));

      const file = path.join(folder, 'model.onnx');
      await trainer.exportOnnx(file, { includePreprocessing: true });
      const session = await ort.InferenceSession.create(file);
      const seconds = Float64Array.from(requests, ({ when }) => datetimeSeconds(when as string) as number);
      const amounts = Float64Array.from(requests, ({ amount }) => amount as number);
      const result = await session.run({
        when: new ort.Tensor('float64', seconds, [seconds.length]),
        amount: new ort.Tensor('float64', amounts, [amounts.length]),
      });
      expectClose(result[session.outputNames[0]].data as Float32Array, expected.data, 'ONNX against predict', {
        tolerance: 1e-5,
      });
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
