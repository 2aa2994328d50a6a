// .npy and CSV files read in C++ (fixtures written by numpy: scripts/make-golden-fixtures.py).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset } from '../src';
import { blobTrainer, rejectionOf } from './helpers';

const data = path.join(__dirname, '..', '..', 'test', 'fixtures', 'data');
const file = (name: string) => path.join(data, name);
const expectedInputs = Array.from({ length: 12 }, (_, i) => i / 4);

describe('datasets from .npy and CSV files', () => {
  it('reads .npy arrays of their dtype and shape, big-endian and Fortran order included', async () => {
    const plain = (await Dataset.fromNpy(file('inputs-f32.npy'), file('labels-i32-big-endian.npy'))).fields();
    expect(plain.input.shape).to.deep.equal([4, 3]);
    expect(Array.from(plain.input.data as Float32Array)).to.deep.equal(expectedInputs);
    expect(plain.target.data).to.be.instanceOf(Int32Array);
    expect(Array.from(plain.target.data as Int32Array)).to.deep.equal([2, 0, 1, 1]);

    const fortran = (await Dataset.fromNpy(file('inputs-f64-fortran.npy'), file('labels-i64.npy'))).fields();
    expect(fortran.input.data).to.be.instanceOf(Float64Array);
    expect(Array.from(fortran.input.data as Float64Array)).to.deep.equal(expectedInputs);
    expect(Array.from(fortran.target.data as BigInt64Array, Number)).to.deep.equal([2, 0, 1, 1]);
  });

  it('reads a CSV file with a named label column and trims cells', async () => {
    const iris = await Dataset.fromCsv(file('iris-like.csv'), { labelColumn: 'species' });
    const { input: inputs, target: targets } = iris.fields();
    expect(inputs.shape).to.deep.equal([4, 2]);
    expect(Array.from(inputs.data as Float32Array)).to.deep.equal([5.1, 1.4, 6.2, 4.5, 7.7, 6.7, 4.9, 1.5].map(Math.fround));
    expect(Array.from(targets.data as BigInt64Array, Number)).to.deep.equal([0, 1, 2, 0]);
    const regression = (await Dataset.fromCsv(file('iris-like.csv'), { labelColumn: 0, targets: 'value' })).fields();
    expect(Array.from(regression.target.data as Float32Array)).to.deep.equal([5.1, 6.2, 7.7, 4.9].map(Math.fround));
    const history = await blobTrainer({ numEpochs: 1, batchSize: 2 }, {}).fit(
      await Dataset.fromCsv(file('iris-like.csv'), { labelColumn: 'species' }),
    ).catch((error: Error) => error);
    expect((history as Error).message).to.contain('dataset samples of shape [2] do not fit the model');
  });

  it('names the file, line and column of bad CSV and .npy content', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-csv-'));
    const write = (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const ragged = write('ragged.csv', 'a,b,label\n1,2,0\n3,0\n');
    expect((await rejectionOf(Dataset.fromCsv(ragged))).message).to.equal(`${ragged}:3: 2 columns, expected 3`);
    const text = write('text.csv', 'a,label\n1,0\nx,1\n');
    expect((await rejectionOf(Dataset.fromCsv(text))).message).to.equal(`${text}:3: column 1 holds 'x', not a number`);
    const fraction = write('fraction.csv', 'a,label\n1,0.5\n');
    expect((await rejectionOf(Dataset.fromCsv(fraction))).message).to.contain("class label '0.5' is not an integer");
    expect((await rejectionOf(Dataset.fromCsv(ragged, { labelColumn: 'species' }))).message).to.contain(
      "no column named 'species'",
    );
    const notNpy = write('not.npy', 'hello');
    expect((await rejectionOf(Dataset.fromNpy(notNpy, notNpy))).message).to.equal(
      `${notNpy}: not a .npy file (it does not start with \\x93NUMPY)`,
    );
    const truncated = path.join(dir, 'truncated.npy');
    fs.writeFileSync(truncated, fs.readFileSync(file('inputs-f32.npy')).subarray(0, 140));
    expect((await rejectionOf(Dataset.fromNpy(truncated, truncated))).message).to.contain('truncated .npy data');
    const mismatch = await rejectionOf(Dataset.fromNpy(file('inputs-f32.npy'), file('iris-like.csv')));
    expect(mismatch.message).to.contain('not a .npy file');
    fs.rmSync(dir, { recursive: true });
  });
});
