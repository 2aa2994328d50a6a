// Records and CSV cells as services and real files give them: a column read
// as it was at fit time whatever else a request holds, infinite numbers and
// non-scalar values refused with the row and column named, and a column that
// missing-value tokens emptied said out loud.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { readCsv, Table, TablePreprocessor, type NumericArray, type TableRecord, type TensorData } from '../src';
import { errorOf, rejectionOf } from './support/helpers';

const values = (tensor: TensorData<NumericArray> | undefined): number[] =>
  Array.from((tensor?.data ?? []) as Float32Array);

describe('table records and cells', () => {
  const training = Table.fromRecords([
    { code: '10', v: 1 },
    { code: 'X', v: 2 },
    { code: '20', v: 3 },
    { code: 'X', v: 4 },
  ]);

  it('reads a request as the training rows were read: a text category that looks like a number stays text', () => {
    const preprocessor = new TablePreprocessor({
      numeric: { columns: ['v'] },
      categorical: { columns: ['code'] },
    }).fit(training);
    const alone = preprocessor.transform(Table.fromRecords([{ code: '10', v: 1 }])).input;
    const batched = preprocessor.transform(
      Table.fromRecords([
        { code: '10', v: 1 },
        { code: 'X', v: 2 },
      ]),
    ).input;
    expect(values(alone)).to.deep.equal(values(batched).slice(0, 4));
    // One-hot over ['10', '20', 'X'] after the scaled v: '10' is the first category, alone or not.
    expect(values(alone).slice(1)).to.deep.equal([1, 0, 0]);
    // A number where the training rows had text is that text.
    const numeric = preprocessor.transform(Table.fromRecords([{ code: 10, v: 1 }])).input;
    expect(values(numeric)).to.deep.equal(values(alone));
    // Saved and read back, it reads them the same way.
    const reloaded = TablePreprocessor.fromJSON(JSON.parse(JSON.stringify(preprocessor.toJSON())));
    expect(values(reloaded.transform(Table.fromRecords([{ code: '10', v: 1 }])).input)).to.deep.equal(values(alone));
  });

  it('refuses an infinite number in a record, naming the record and field', () => {
    for (const v of [JSON.parse('1e400') as number, '1e400', 'Infinity', '-inf', -Infinity]) {
      const error = errorOf(() => Table.fromRecords([{ v: 1 }, { v }], 'request'));
      expect(error.code, String(v)).to.equal('ERR_FIREBRAND_DATA');
      expect(error.message).to.contain("request[1]: column 'v' holds").and.contain('not a finite number');
    }
    // NaN in a JavaScript record is a missing value, as null is.
    expect(Array.from(Table.fromRecords([{ v: NaN }, { v: 2 }]).column('v') as Float64Array)).to.deep.equal([NaN, 2]);
    // A text column may hold the word.
    expect(Table.fromRecords([{ name: 'Inf' }, { name: 'Bob' }]).kindOf('name')).to.equal('text');
  });

  it('refuses an infinite number in a CSV cell, naming the file, line and column', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-cells-'));
    try {
      const file = path.join(folder, 'weather.csv');
      fs.writeFileSync(file, 'day,rain\n1,0.5\n2,inf\n');
      const error = await rejectionOf(readCsv(file));
      expect(error.code).to.equal('ERR_FIREBRAND_DATA');
      expect(error.message).to.contain(`${file}, line 3: column 'rain' holds "inf", which is not a finite number`);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('says a file is not CSV text, with the offset of the first byte that is not UTF-8 or is a NUL', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-cells-'));
    try {
      const latin1 = path.join(folder, 'latin1.csv');
      fs.writeFileSync(latin1, Buffer.concat([Buffer.from('city,n\nZ'), Buffer.from([0xfc]), Buffer.from('rich,1\n')]));
      expect((await rejectionOf(readCsv(latin1))).message).to.equal(
        `${latin1}: not a CSV text file: byte 8 (0xfc) is not UTF-8; save the table as UTF-8 CSV`,
      );
      const binary = path.join(folder, 'binary.csv');
      fs.writeFileSync(binary, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00]));
      const error = await rejectionOf(readCsv(binary));
      expect(error.code).to.equal('ERR_FIREBRAND_FILE');
      expect(error.message).to.contain('byte 4 (0x00) is a NUL');
      const utf8 = path.join(folder, 'utf8.csv');
      fs.writeFileSync(utf8, 'city,n\nZürich,1\n');
      expect((await readCsv(utf8)).column('city')).to.deep.equal(['Zürich']);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('refuses objects and arrays as field values instead of reading "[object Object]" or 4500', () => {
    const object = errorOf(() => Table.fromRecords([{ sex: { v: 'MALE' } } as never], 'request'));
    expect(object.code).to.equal('ERR_FIREBRAND_DATA');
    expect(object.message).to.equal(
      'request[0]: field \'sex\' is an object ({"v":"MALE"}); expected a number, a text, a boolean or null (missing)',
    );
    const array = errorOf(() => Table.fromRecords([{ mass: 1 }, { mass: [4500] } as never], 'request'));
    expect(array.message).to.contain("request[1]: field 'mass' is an array ([4500])");
  });

  it('warns at fit when missing-value tokens emptied most of a column, naming them', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-cells-'));
    const warnings: Error[] = [];
    const listener = (warning: Error) => warnings.push(warning);
    process.on('warning', listener);
    try {
      const file = path.join(folder, 'strikes.csv');
      const rows = ['height,damage', ...Array.from({ length: 10 }, (_, i) => `${i},${i < 7 ? 'None' : 'Minor'}`)];
      fs.writeFileSync(file, `${rows.join('\n')}\n`);
      const table = await readCsv(file);
      new TablePreprocessor({
        numeric: { columns: ['height'] },
        categorical: { columns: ['damage'], impute: 'most_frequent' },
      }).fit(table);
      await new Promise((resolve) => setImmediate(resolve));
      const mostlyMissing = warnings.filter(
        (warning) => (warning as { code?: string }).code === 'FIREBRAND_MOSTLY_MISSING',
      );
      expect(mostlyMissing.map((warning) => warning.message)).to.deep.equal([
        `${file}: column 'damage' is missing in 7 of 10 training rows; the cells "None" (7) read as missing; ` +
          "if one of them is a value, give readCsv's naValues without it",
      ]);
      // Read with naValues that leave 'None' a category, nothing is missing and nothing is said.
      warnings.length = 0;
      const kept = await readCsv(file, { naValues: [''] });
      new TablePreprocessor({ categorical: { columns: ['damage'] } }).fit(kept);
      await new Promise((resolve) => setImmediate(resolve));
      expect(
        warnings.filter((warning) => (warning as { code?: string }).code === 'FIREBRAND_MOSTLY_MISSING'),
      ).to.have.length(0);
    } finally {
      process.off('warning', listener);
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('Table operations: select, filter, withColumn, toRecords', () => {
  const records: TableRecord[] = [
    { species: 'Adelie', mass: 3750, island: 'Torgersen' },
    { species: 'Gentoo', mass: null, island: 'Biscoe' },
    { species: 'Adelie', mass: 4100.5, island: null },
  ];
  const table = Table.fromRecords(records, 'penguins');

  it('selects columns in the order asked, naming the closest for an unknown one', () => {
    const picked = table.select(['mass', 'species']);
    expect(picked.columns).to.deep.equal(['mass', 'species']);
    expect(picked.toRecords()).to.deep.equal(records.map(({ mass, species }) => ({ mass, species })));
    expect(() => table.select(['spcies'])).to.throw(/no column 'spcies'.*'species'/);
  });

  it('filters rows, each still named where it came from', () => {
    const adelie = table.filter((record) => record.species === 'Adelie');
    expect(adelie.numRows).to.equal(2);
    expect(adelie.toRecords()).to.deep.equal([records[0], records[2]]);
    expect(adelie.where(1)).to.equal('penguins[2]');
  });

  it('adds or replaces a column typed as fromRecords types a field, refusing what a cell cannot hold', () => {
    const withKg = table.withColumn('kg', (record) => (record.mass === null ? null : (record.mass as number) / 1000));
    expect(withKg.columns).to.deep.equal(['species', 'mass', 'island', 'kg']);
    expect(withKg.kindOf('kg')).to.equal('number');
    expect(Array.from(withKg.column('kg') as Float64Array)).to.deep.equal([3.75, NaN, 4.1005]);
    const replaced = table.withColumn('island', (record, row) => `${record.island ?? 'unknown'}-${row}`);
    expect(replaced.columns).to.deep.equal(table.columns);
    expect(replaced.column('island')).to.deep.equal(['Torgersen-0', 'Biscoe-1', 'unknown-2']);
    expect(() => table.withColumn('bad', (_, row) => (row === 1 ? Infinity : 1))).to.throw(
      /penguins\[1\]: column 'bad' holds "Infinity"/,
    );
    expect(() => table.withColumn('bad', () => [1] as never)).to.throw(/penguins\[0\]: field 'bad' is an array/);
    // The original is unchanged.
    expect(table.columns).to.deep.equal(['species', 'mass', 'island']);
  });
});
