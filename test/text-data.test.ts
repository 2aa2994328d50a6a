// Text for next-token training: Dataset.fromTokens' windows (packed documents
// as views of one stream, or one document at a time with padding the loss
// skips) and the built-in byte and character tokenizers.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ByteTokenizer, CharTokenizer, Dataset, Trainer } from '../src';
import { errorOf, rejectionOf } from './support/helpers';
import { GPTMini } from '../examples/models/gpt';

const rows = (dataset: Dataset, field: 'input' | 'target'): number[][] => {
  const { data, shape } = dataset.fields()[field];
  const values = Array.from(data as BigInt64Array, Number);
  return Array.from({ length: shape[0] }, (_, i) => values.slice(i * shape[1], (i + 1) * shape[1]));
};

describe('text data', () => {
  describe('Dataset.fromTokens', () => {
    const tokens = Int32Array.from({ length: 10 }, (_, i) => i);

    it('cuts windows side by side, or every stride tokens, each with the next tokens as targets', () => {
      const side = Dataset.fromTokens(tokens, { contextLength: 4 });
      expect(rows(side, 'input')).to.deep.equal([
        [0, 1, 2, 3],
        [4, 5, 6, 7],
      ]);
      expect(rows(side, 'target')).to.deep.equal([
        [1, 2, 3, 4],
        [5, 6, 7, 8],
      ]);
      const sliding = Dataset.fromTokens(tokens, { contextLength: 4, stride: 1 });
      expect(sliding.length).to.equal(6);
      expect(rows(sliding, 'input')[5]).to.deep.equal([5, 6, 7, 8]);
      expect(rows(sliding, 'target')[5]).to.deep.equal([6, 7, 8, 9]);
      expect(sliding.fieldShapes).to.deep.equal({ input: [4], target: [4] });
    });

    it('takes plain arrays of whole numbers (as generate does), one or several documents, naming a fractional id', () => {
      const plain = Array.from(tokens);
      expect(rows(Dataset.fromTokens(plain, { contextLength: 4 }), 'input')).to.deep.equal(
        rows(Dataset.fromTokens(tokens, { contextLength: 4 }), 'input'),
      );
      expect(Dataset.fromTokens([plain, plain], { contextLength: 4, stride: 4 }).length).to.equal(
        Dataset.fromTokens([tokens, tokens], { contextLength: 4, stride: 4 }).length,
      );
      const fractional = errorOf(() => Dataset.fromTokens([1, 2, 2.5, 3, 4], { contextLength: 2 }));
      expect(fractional.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(fractional.message).to.contain('tokens[2] is 2.5');
    });

    it('packs documents into one stream with a separator, or windows each alone with padding the loss skips', () => {
      const documents = [Int32Array.of(1, 2, 3), BigInt64Array.of(4n, 5n, 6n, 7n, 8n)];
      const packed = Dataset.fromTokens(documents, { contextLength: 3, separator: 0 });
      expect(rows(packed, 'input')).to.deep.equal([
        [1, 2, 3],
        [0, 4, 5],
      ]);
      expect(rows(packed, 'target')[1]).to.deep.equal([4, 5, 6]);
      const separate = Dataset.fromTokens(documents, { contextLength: 3, packDocuments: false, padToken: 9 });
      expect(rows(separate, 'input')).to.deep.equal([
        [1, 2, 9],
        [4, 5, 6],
        [7, 9, 9],
      ]);
      expect(rows(separate, 'target')).to.deep.equal([
        [2, 3, -100],
        [5, 6, 7],
        [8, -100, -100],
      ]);
    });

    it('trains a character-level GPT on a text: the loss falls', async () => {
      const text = 'the cat sat on the mat. '.repeat(12);
      const tokenizer = CharTokenizer.fromText(text);
      const data = Dataset.fromTokens(tokenizer.encode(text), { contextLength: 8, stride: 3 });
      const trainer = new Trainer({
        model: new GPTMini({ vocab: tokenizer.vocabSize }),
        loss: 'cross_entropy',
        optimizer: { name: 'adamw', lr: 3e-3 },
        config: { progressBar: false, numThreads: 1, batchSize: 16, numEpochs: 6 },
      });
      const history = await trainer.fit(data);
      expect(history.epochs[5].loss).to.be.below(history.epochs[0].loss * 0.7);
    });

    it('names the option or document at fault', () => {
      const cases: [() => unknown, string][] = [
        [
          () => Dataset.fromTokens(tokens, { contextLength: 10 }),
          'fromTokens: 10 tokens make no window of contextLength 10 (a window needs contextLength + 1 tokens',
        ],
        [
          () => Dataset.fromTokens(tokens, { contextLength: 0 }),
          'fromTokens.contextLength: got 0, expected an integer >= 1',
        ],
        [
          () => Dataset.fromTokens(tokens, { contextLength: 2, stride: 0 }),
          'fromTokens.stride: got 0, expected an integer >= 1',
        ],
        [
          () => Dataset.fromTokens([tokens, Float32Array.of(1, 2)], { contextLength: 2 }),
          'fromTokens: documents[1] must hold integer token ids, got float32',
        ],
        [
          () => Dataset.fromTokens([Int32Array.of(1)], { contextLength: 2, packDocuments: false }),
          'fromTokens: no document has 2 tokens or more',
        ],
      ];
      for (const [make, message] of cases) {
        const error = errorOf(make);
        expect(error.code, message).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
        expect(error.message).to.contain(message);
      }
    });
  });

  describe('Dataset.fromTokenFile', () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-tokens-'));
    after(() => fs.rmSync(folder, { recursive: true, force: true }));
    const ids = Array.from({ length: 50 }, (_, i) => (i * 7919) % 65_000);
    const write = (name: string, array: ArrayBufferView) => {
      const file = path.join(folder, name);
      fs.writeFileSync(file, new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
      return file;
    };

    it("reads nanoGPT's uint16 train.bin (ids past 32767 too), int32 and int64, as fromTokens windows them", async () => {
      const expected = Dataset.fromTokens(BigInt64Array.from(ids, BigInt), { contextLength: 8, stride: 3 });
      for (const [dtype, array] of [
        ['uint16', Uint16Array.from(ids)],
        ['int32', Int32Array.from(ids)],
        ['int64', BigInt64Array.from(ids, BigInt)],
      ] as const) {
        const file = write(`train-${dtype}.bin`, array);
        const dataset = await Dataset.fromTokenFile(file, {
          contextLength: 8,
          stride: 3,
          ...(dtype === 'uint16' ? {} : { dtype }),
        });
        expect(rows(dataset, 'input'), dtype).to.deep.equal(rows(expected, 'input'));
        expect(rows(dataset, 'target'), dtype).to.deep.equal(rows(expected, 'target'));
      }
    });

    it('names the file, its size or the option at fault', async () => {
      const odd = write('odd.bin', Uint8Array.of(1, 2, 3));
      const cases: [() => Promise<unknown>, string, string][] = [
        [
          () => Dataset.fromTokenFile(path.join(folder, 'missing.bin'), { contextLength: 2 }),
          'ERR_FIREBRAND_FILE',
          'missing.bin: cannot open the token file',
        ],
        [
          () => Dataset.fromTokenFile(odd, { contextLength: 2 }),
          'ERR_FIREBRAND_FILE',
          'odd.bin: holds 3 bytes, not a whole number of uint16 tokens (2 bytes each); is dtype the one it was written with?',
        ],
        [
          () => Dataset.fromTokenFile(odd, { contextLength: 2, dtype: 'float32' as 'int32' }),
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          "fromTokenFile.dtype: got 'float32', expected one of 'uint16', 'int32', 'int64'",
        ],
        [
          () => Dataset.fromTokenFile(write('short.bin', Uint16Array.of(1, 2)), { contextLength: 2 }),
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          'fromTokenFile: 2 tokens make no window of contextLength 2',
        ],
        [
          () => Dataset.fromTokenFile(odd, { contextLength: 0, dtype: 'int32' }),
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          'fromTokenFile.contextLength: got 0, expected an integer >= 1',
        ],
      ];
      for (const [load, code, message] of cases) {
        const error = await rejectionOf(load());
        expect(error.code, error.message).to.equal(code);
        expect(error.message).to.contain(message);
      }
    });
  });

  describe('tokenizers', () => {
    it('ByteTokenizer: UTF-8 bytes both ways, 256 ids', () => {
      const tokenizer = new ByteTokenizer();
      const ids = tokenizer.encode('héllo ✓');
      expect(Array.from(ids)).to.deep.equal([104, 195, 169, 108, 108, 111, 32, 226, 156, 147]);
      expect(tokenizer.decode(ids)).to.equal('héllo ✓');
      expect(tokenizer.decode([104, 195])).to.equal('h\uFFFD');
      expect(errorOf(() => tokenizer.decode([104, 300])).message).to.equal(
        'ByteTokenizer.decode: ids[1] is 300, expected a byte in [0, 255]',
      );
    });

    it('CharTokenizer: the characters of a text in code-point order, saved as JSON', () => {
      const tokenizer = CharTokenizer.fromText('banana 🍌');
      expect(tokenizer.chars).to.deep.equal([' ', 'a', 'b', 'n', '🍌']);
      expect(Array.from(tokenizer.encode('nab 🍌'))).to.deep.equal([3, 1, 2, 0, 4]);
      expect(tokenizer.decode(BigInt64Array.of(2n, 1n, 3n))).to.equal('ban');
      const restored = CharTokenizer.fromJSON(JSON.parse(JSON.stringify(tokenizer)) as { chars: string[] });
      expect(restored.decode(restored.encode('anna'))).to.equal('anna');
      expect(errorOf(() => tokenizer.encode('bad')).message).to.equal(
        "CharTokenizer.encode: 'd' (U+0064) at character 2 is not among the 5 characters it was made from",
      );
      expect(errorOf(() => tokenizer.decode([5])).message).to.equal(
        'CharTokenizer.decode: ids[0] is 5, expected an id in [0, 4]',
      );
    });
  });
});
