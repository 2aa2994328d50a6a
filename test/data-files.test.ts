// .npy, .npz, .safetensors and CSV files read in C++ (fixtures written by numpy: scripts/make-golden-fixtures.py).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, loadSafetensors } from '../src';
import { blobTrainer, rejectionOf } from './support/helpers';

const data = path.join(__dirname, '..', '..', 'test', 'fixtures', 'data');
const file = (name: string) => path.join(data, name);
const expectedInputs = Array.from({ length: 12 }, (_, i) => i / 4);

describe('datasets from .npy, .npz, .safetensors and CSV files', () => {
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
    expect(Array.from(inputs.data as Float32Array)).to.deep.equal(
      [5.1, 1.4, 6.2, 4.5, 7.7, 6.7, 4.9, 1.5].map(Math.fround),
    );
    expect(Array.from(targets.data as BigInt64Array, Number)).to.deep.equal([0, 1, 2, 0]);
    const regression = (await Dataset.fromCsv(file('iris-like.csv'), { labelColumn: 0, targets: 'value' })).fields();
    expect(Array.from(regression.target.data as Float32Array)).to.deep.equal([5.1, 6.2, 7.7, 4.9].map(Math.fround));
    const history = await blobTrainer({ numEpochs: 1, batchSize: 2 }, {})
      .fit(await Dataset.fromCsv(file('iris-like.csv'), { labelColumn: 'species' }))
      .catch((error: Error) => error);
    expect((history as Error).message).to.contain('dataset samples of shape [2] do not fit the model');
  });

  it('names the file, line and column of bad CSV and .npy content', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-csv-'));
    const write = (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const ragged = write('ragged.csv', 'a,b,label\n1,2,0\n3,0\n');
    expect((await rejectionOf(Dataset.fromCsv(ragged))).message).to.match(
      new RegExp(`^${ragged}, line 3: Invalid Record Length: expect 3, got 2`),
    );
    const text = write('text.csv', 'a,label\n1,0\nx,1\n');
    const textError = await rejectionOf(Dataset.fromCsv(text));
    expect(textError.code).to.equal('ERR_FIREBRAND_DATA');
    expect(textError.message).to.contain(`${text}, line 3: column 'a' holds "x", not a number`);
    const fraction = write('fraction.csv', 'a,label\n1,0.5\n');
    expect((await rejectionOf(Dataset.fromCsv(fraction))).message).to.contain(
      `${fraction}, line 2: target column 'label' holds 0.5, not a class index (a whole number >= 0)`,
    );
    const wellFormed = write('well-formed.csv', 'a,b,label\n1,2,0\n');
    expect((await rejectionOf(Dataset.fromCsv(wellFormed, { labelColumn: 'species' }))).message).to.contain(
      "no column 'species'",
    );
    const empty = write('empty-cell.csv', 'age,label\r\n31,0\r\n,1\r\n');
    expect((await rejectionOf(Dataset.fromCsv(empty))).message).to.contain(
      `${empty}, line 3: column 'age' is missing a value`,
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

  it('reads .npz archives, stored and deflated, choosing arrays by name', async () => {
    const stored = await Dataset.fromNpz(file('stored.npz'), { input: 'x_train', target: 'y_train' });
    expect(stored.fieldShapes).to.deep.equal({ input: [3], target: [] });
    expect(Array.from(stored.fields().input.data as Float32Array)).to.deep.equal(expectedInputs);
    const compressed = (await Dataset.fromNpz(file('compressed.npz'))).fields();
    expect(compressed.input.data).to.be.instanceOf(Float64Array);
    expect(Array.from(compressed.input.data as Float64Array)).to.deep.equal(expectedInputs);
    expect(Array.from(compressed.target.data as Int32Array)).to.deep.equal([2, 0, 1, 1]);
    expect((await rejectionOf(Dataset.fromNpz(file('stored.npz'), { input: 'x_test' }))).message).to.equal(
      `${file('stored.npz')}: no array 'x_test' for field 'input' (the file has x_train, y_train)`,
    );
    expect((await rejectionOf(Dataset.fromNpz(file('iris-like.csv')))).message).to.equal(
      `${file('iris-like.csv')}: not a ZIP archive (no end-of-directory record)`,
    );
  });

  it('reads a .safetensors file of several dtypes, as safetensors.torch.save_file writes it', async () => {
    const data = await Dataset.fromSafetensors(file('tensors.safetensors'), {
      input: 'input',
      target: 'target',
      mask: 'mask_f16',
    });
    const fields = data.fields();
    expect(Array.from(fields.input.data as Float32Array)).to.deep.equal(expectedInputs);
    expect(Array.from(fields.target.data as BigInt64Array, Number)).to.deep.equal([2, 0, 1, 1]);
    // float16 has no TypedArray: it comes back as float32.
    expect(Array.from(fields.mask.data as Float32Array)).to.deep.equal([1, 0.5, 0, 1]);
    const all = await rejectionOf(Dataset.fromSafetensors(file('tensors.safetensors')));
    expect(all.message).to.contain('hold different numbers of samples');
  });

  it('refuses malformed .safetensors files with the reason, never reading out of bounds', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-st-'));
    const good = fs.readFileSync(file('tensors.safetensors'));
    const headerLength = Number(good.readBigUInt64LE(0));
    const header = JSON.parse(good.subarray(8, 8 + headerLength).toString());
    const dataSection = good.subarray(8 + headerLength);
    let count = 0;
    const write = (bytes: Buffer) => {
      const name = path.join(dir, `bad-${count++}.safetensors`);
      fs.writeFileSync(name, bytes);
      return name;
    };
    const withHeader = (edit: (h: typeof header) => void, data: Buffer = dataSection) => {
      const copy = JSON.parse(JSON.stringify(header));
      edit(copy);
      const text = Buffer.from(JSON.stringify(copy));
      const length = Buffer.alloc(8);
      length.writeBigUInt64LE(BigInt(text.length));
      return write(Buffer.concat([length, text, data]));
    };
    const reason = async (name: string) =>
      (await rejectionOf(Dataset.fromSafetensors(name, { input: 'input' }))).message;

    const short = write(good.subarray(0, 5));
    expect(await reason(short)).to.equal(`${short}: too short for a safetensors file (5 bytes)`);
    const huge = Buffer.from(good);
    huge.writeBigUInt64LE(1n << 40n);
    const hugeFile = write(huge);
    expect(await reason(hugeFile)).to.equal(
      `${hugeFile}: header length 1099511627776 does not fit a file of ${good.length} bytes; not a safetensors file, or truncated`,
    );
    const truncated = write(good.subarray(0, good.length - 4));
    expect(await reason(truncated)).to.match(
      /tensor 'weight_bf16': its bytes \[88, 96\) lie outside the data section of 92 bytes/,
    );
    const badJson = Buffer.from(good);
    badJson.write('{"input":', 8);
    expect(await reason(write(badJson))).to.match(/safetensors header: /);
    expect(await reason(withHeader((h) => (h.input.dtype = 'U16')))).to.contain(
      "tensor 'input': dtype 'U16' is not supported",
    );
    expect(await reason(withHeader((h) => (h.input.shape = [4, 4])))).to.contain(
      "tensor 'input': 48 bytes do not hold its shape of F32 values (64 bytes)",
    );
    expect(await reason(withHeader((h) => (h.input.shape = [-1, 3])))).to.contain(
      "'shape' must be a list of non-negative integers",
    );
    expect(await reason(withHeader((h) => (h.input.data_offsets = [40, 32])))).to.contain(
      "'data_offsets' must be [begin, end]",
    );
    expect(await reason(withHeader((h) => (h.mask_f16.data_offsets = [76, 84])))).to.contain(
      "tensors 'input' and 'mask_f16' overlap in the data section",
    );
    expect(await reason(withHeader((h) => (h.input.extra = 1)))).to.contain("tensor 'input': unknown field 'extra'");
    expect(await reason(withHeader((h) => (h.__metadata__ = { n: 1 })))).to.contain(
      "'__metadata__' must be an object of strings",
    );
    const deep = Buffer.from('['.repeat(100_000));
    const deepLength = Buffer.alloc(8);
    deepLength.writeBigUInt64LE(BigInt(deep.length));
    expect(await reason(write(Buffer.concat([deepLength, deep])))).to.contain('nesting deeper than 64');
    fs.rmSync(dir, { recursive: true });
  });

  it('turns every input the fuzzer kept (scripts/fuzz-safetensors.sh) into tensors or a clear error', async () => {
    const folder = path.join(__dirname, '..', '..', 'test', 'fixtures', 'fuzz');
    const inputs = fs.readdirSync(folder).filter((name) => name.startsWith('safetensors-'));
    expect(inputs.length).to.be.above(0);
    for (const name of inputs) {
      const outcome = await loadSafetensors(path.join(folder, name)).then(
        () => 'read',
        (error: Error & { code?: string }) => error.code,
      );
      expect(['read', 'ERR_FIREBRAND_FILE', 'ERR_FIREBRAND_INVALID_ARGUMENT'], name).to.include(outcome);
    }
  });
});
