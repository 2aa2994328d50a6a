// Tables from files beside CSV. Parquet as pyarrow writes it (pandas.to_parquet,
// Hugging Face datasets' shards): Table.fromParquet against what
// pandas.read_parquet reads (golden files from scripts/make-parquet-fixtures.py),
// the same rows as the CSV they came from, row groups streamed one at a time,
// and errors that name the column and row. JSON Lines: Table.fromJsonl typed as
// fromRecords, errors naming the line.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';

import { readCsv, Table, TablePreprocessor, type TablePreprocessorSpec } from '../src';
import { rejectionOf } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'tables');
const kindsFile = path.join(fixtures, 'kinds.parquet');
const passengersFile = path.join(fixtures, 'passengers.parquet');

interface KindsGolden {
  columns: string[];
  rows: Record<string, string | number | null>[];
  dtypes: Record<string, string>;
}
const kinds = JSON.parse(fs.readFileSync(path.join(fixtures, 'kinds.golden.json'), 'utf8')) as KindsGolden;

/** A column's cells as pandas' golden spells them: numbers (null: NaN) or text (null: missing). */
function cellsOf(table: Table, name: string): (string | number | null)[] {
  const column = table.column(name);
  return column instanceof Float64Array
    ? Array.from(column, (value) => (Number.isNaN(value) ? null : value))
    : [...column];
}

describe('Table.fromParquet: Parquet files as pandas.read_parquet reads them', () => {
  let folder: string;
  beforeEach(() => (folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-parquet-'))));
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  it("types each column by the file's schema: numbers, text (digits stay text), booleans, dates, timestamps", async () => {
    const table = await Table.fromParquet(kindsFile, { columns: kinds.columns });
    expect(table.columns).to.deep.equal(kinds.columns);
    expect(table.numRows).to.equal(kinds.rows.length);
    for (const name of kinds.columns) {
      expect(cellsOf(table, name), name).to.deep.equal(kinds.rows.map((row) => row[name]));
    }
    expect(table.kindOf('count')).to.equal('number');
    expect(table.kindOf('ratio')).to.equal('number');
    // pandas keeps '007' a string (object dtype); a CSV cell would read as the number 7.
    expect(kinds.dtypes.code).to.equal('object');
    expect(table.kindOf('code')).to.equal('text');
    expect(table.textsOf('count')).to.deep.equal(['3', null, '-7', String(2 ** 40)]);
  });

  it('refuses a nested column, naming it, unless the columns option leaves it out', async () => {
    const error = await rejectionOf(Table.fromParquet(kindsFile));
    expect(error.code).to.equal('ERR_FIREBRAND_DATA');
    expect(error.message).to.contain("column 'tags' holds nested values").and.contain('columns option');
  });

  it('reads the rows pandas wrote from a CSV (ZSTD pages, dictionary strings, 3 row groups) as that CSV', async () => {
    const fromParquet = await Table.fromParquet(passengersFile);
    const fromCsv = await readCsv(path.join(fixtures, 'passengers.csv'));
    expect(fromParquet.columns).to.deep.equal(fromCsv.columns);
    expect(fromParquet.numRows).to.equal(40);
    for (const name of fromCsv.columns) {
      expect(fromParquet.kindOf(name), name).to.equal(fromCsv.kindOf(name));
      expect(cellsOf(fromParquet, name), name).to.deep.equal(cellsOf(fromCsv, name));
    }
    // Preprocessing fitted on either gives the same features.
    const spec: TablePreprocessorSpec = {
      numeric: { columns: ['age', 'fare'], impute: 'median', scale: 'standard' },
      categorical: { columns: ['sex', 'port', 'class'], encode: 'onehot', handleUnknown: 'ignore' },
      target: 'survived',
    };
    const features = (table: Table) => new TablePreprocessor(spec).fit(table).transformWithTarget(table);
    expect(features(fromParquet)).to.deep.equal(features(fromCsv));
    expect(fromParquet.where(17)).to.equal(`${passengersFile}, row 17`);
  });

  it('streams the row groups one table at a time, each row named by its index in the file', async () => {
    const sizes: number[] = [];
    const firsts: string[] = [];
    for await (const part of Table.fromParquetRowGroups(passengersFile, { columns: ['fare', 'name'] })) {
      sizes.push(part.numRows);
      firsts.push(part.where(0));
      expect(part.columns).to.deep.equal(['fare', 'name']);
    }
    expect(sizes).to.deep.equal([16, 16, 8]);
    expect(firsts).to.deep.equal([0, 16, 32].map((row) => `${passengersFile}, row ${row}`));
    // Stopping early closes the file: it can be removed at once, and read again.
    const copy = path.join(folder, 'copy.parquet');
    fs.copyFileSync(passengersFile, copy);
    for await (const part of Table.fromParquetRowGroups(copy)) {
      expect(part.numRows).to.equal(16);
      break;
    }
    expect((await Table.fromParquet(copy)).numRows).to.equal(40);
  });

  it('refuses an infinite number naming its row, an unknown column naming the closest, a file that is not Parquet and unknown options', async () => {
    const file = path.join(folder, 'infinite.parquet');
    const bytes = parquetWriteBuffer({ columnData: [{ name: 'x', data: [1, 2, Infinity, 4], type: 'DOUBLE' }] });
    fs.writeFileSync(file, new Uint8Array(bytes));
    const infinite = await rejectionOf(Table.fromParquet(file));
    expect(infinite.code).to.equal('ERR_FIREBRAND_DATA');
    expect(infinite.message).to.contain(`${file}, row 2: column 'x' holds Infinity`);
    const unknown = await rejectionOf(Table.fromParquet(passengersFile, { columns: ['fair'] }));
    expect(unknown.message).to.contain("no column 'fair'").and.contain("'fare'");
    const csv = await rejectionOf(Table.fromParquet(path.join(fixtures, 'passengers.csv')));
    expect(csv.code).to.equal('ERR_FIREBRAND_DATA');
    expect(csv.message).to.contain('passengers.csv: not a Parquet file');
    const missing = await rejectionOf(Table.fromParquet(path.join(folder, 'none.parquet')));
    expect(missing.message).to.contain('none.parquet: cannot open');
    const option = await rejectionOf(Table.fromParquet(passengersFile, { column: ['fare'] } as never));
    expect(option.message).to.contain("'column'");
  });
});

describe('Table.fromJsonl: JSON Lines records, a record a line', () => {
  let folder: string;
  beforeEach(() => (folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-jsonl-'))));
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  it('types the columns as fromRecords does, skipping blank lines, and names rows by line', async () => {
    const records = [
      { species: 'Adelie', mass: 3750, island: 'Torgersen' },
      { species: 'Gentoo', mass: null, sex: 'female' },
      { species: 'Adelie', mass: 4100.5 },
    ];
    const file = path.join(folder, 'penguins.jsonl');
    fs.writeFileSync(file, '\uFEFF' + records.map((record) => JSON.stringify(record)).join('\r\n\n') + '\n');
    const table = await Table.fromJsonl(file);
    const expected = Table.fromRecords(records);
    expect(table.columns).to.deep.equal(expected.columns);
    for (const name of expected.columns) expect(cellsOf(table, name), name).to.deep.equal(cellsOf(expected, name));
    expect(table.where(2)).to.equal(`${file}, line 5`);
  });

  it('names the file and line of a line that is not JSON, a record that is not an object, or a field not taken', async () => {
    const file = path.join(folder, 'bad.jsonl');
    fs.writeFileSync(file, '{"a": 1}\n{"a": oops}\n');
    expect((await rejectionOf(Table.fromJsonl(file))).message).to.contain(`${file}:2: not JSON`);
    fs.writeFileSync(file, '{"a": 1}\n\n[1, 2]\n');
    expect((await rejectionOf(Table.fromJsonl(file))).message).to.contain(`${file}, line 3: expected a record`);
    fs.writeFileSync(file, '{"a": 1}\n{"b": {"c": 2}}\n');
    expect((await rejectionOf(Table.fromJsonl(file))).message).to.contain(`${file}, line 2: field 'b' is an object`);
    expect((await rejectionOf(Table.fromJsonl(file, { columns: ['a'] }))).message).to.contain(
      `${file}, line 2: field 'b' is none of the columns taken`,
    );
    expect((await rejectionOf(Table.fromJsonl(path.join(folder, 'none.jsonl')))).message).to.contain('cannot open');
  });
});
