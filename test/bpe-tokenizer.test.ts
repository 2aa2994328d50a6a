// HuggingFaceTokenizer: BPE tokenizer.json files trained by Hugging Face's Rust
// tokenizers (scripts/make-tokenizer-fixtures.py) give, through tokenizers.js,
// the ids, special tokens and decoded text that library gives; then one trains
// and samples a GPT end to end.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, HuggingFaceTokenizer, Trainer } from '../src';
import { errorOf } from './support/helpers';
import { GPTMini } from '../examples/models/gpt';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'tokenizers');

interface Case {
  text: string;
  ids: number[];
  idsWithoutSpecial: number[];
  decoded: string;
  decodedWithoutSpecial: string;
}
const expected = JSON.parse(fs.readFileSync(path.join(fixtures, 'expected.json'), 'utf8')) as Record<
  string,
  { vocabSize: number; cases: Case[] }
>;

describe('HuggingFaceTokenizer (BPE through tokenizers.js)', function () {
  this.timeout(60_000);

  for (const [name, layout] of [
    ['gpt2-style', 'byte-level'],
    ['llama-style', 'SentencePiece-style, byte fallback'],
  ]) {
    it(`gives the ids and text of Hugging Face's Rust tokenizers for a ${layout} BPE (${name})`, () => {
      const tokenizer = HuggingFaceTokenizer.fromFile(path.join(fixtures, name, 'tokenizer.json'));
      expect(tokenizer.vocabSize).to.equal(expected[name].vocabSize);
      for (const sample of expected[name].cases) {
        const ids = tokenizer.encode(sample.text);
        expect(ids).to.be.instanceOf(Int32Array);
        expect(Array.from(ids), JSON.stringify(sample.text)).to.deep.equal(sample.ids);
        expect(Array.from(tokenizer.encode(sample.text, { addSpecialTokens: false }))).to.deep.equal(
          sample.idsWithoutSpecial,
        );
        expect(tokenizer.decode(ids)).to.equal(sample.decoded);
        expect(tokenizer.decode(ids, { skipSpecialTokens: true })).to.equal(sample.decodedWithoutSpecial);
      }
    });
  }

  it('reads a folder, round-trips through toJSON, and finds special tokens by name', () => {
    const file = path.join(fixtures, 'gpt2-style', 'tokenizer.json');
    const tokenizer = HuggingFaceTokenizer.fromFile(path.dirname(file));
    expect(tokenizer.toJSON()).to.deep.equal(JSON.parse(fs.readFileSync(file, 'utf8')));
    const again = HuggingFaceTokenizer.fromJSON(JSON.parse(JSON.stringify(tokenizer)));
    const text = 'The fox jumps over the dog<|endoftext|>';
    expect(Array.from(again.encode(text))).to.deep.equal(Array.from(tokenizer.encode(text)));
    const end = tokenizer.tokenToId('<|endoftext|>') as number;
    expect(tokenizer.idToToken(end)).to.equal('<|endoftext|>');
    expect(tokenizer.encode(text).at(-1)).to.equal(end);
    expect(tokenizer.tokenToId('not a token')).to.equal(undefined);
  });

  it('names the file, the JSON or the id at fault', () => {
    const missing = errorOf(() => HuggingFaceTokenizer.fromFile('/nonexistent/tokenizer.json'));
    expect(missing.code).to.equal('ERR_FIREBRAND_FILE');
    expect(missing.message).to.contain('HuggingFaceTokenizer.fromFile: cannot read /nonexistent/tokenizer.json');
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-tokenizer-'));
    try {
      fs.writeFileSync(path.join(folder, 'tokenizer.json'), '{"version": "1.0", "model": {');
      expect(errorOf(() => HuggingFaceTokenizer.fromFile(folder)).message).to.match(
        /^HuggingFaceTokenizer.fromFile: \S+tokenizer.json is not a tokenizer's JSON: /,
      );
      fs.writeFileSync(path.join(folder, 'tokenizer.json'), '{"chars": ["a"]}');
      const wrong = errorOf(() => HuggingFaceTokenizer.fromFile(folder));
      expect(wrong.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(wrong.message).to.contain('has no "model" with a vocab: expected a tokenizer.json');
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
    const tokenizer = HuggingFaceTokenizer.fromFile(path.join(fixtures, 'gpt2-style'));
    const outside = errorOf(() => tokenizer.decode([5, 420]));
    expect(outside.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(outside.message).to.equal('HuggingFaceTokenizer.decode: ids[1] is 420, expected an id in [0, 419]');
    expect(tokenizer.decode([])).to.equal('');
  });

  it('trains a GPT on BPE tokens with documents split by <|endoftext|>, and decodes what it samples', async () => {
    const tokenizer = HuggingFaceTokenizer.fromFile(path.join(fixtures, 'gpt2-style'));
    const documents = ['The quick brown fox jumps over the lazy dog.', 'The dog sleeps; the fox runs on.'].map((text) =>
      tokenizer.encode(text),
    );
    const separator = tokenizer.tokenToId('<|endoftext|>') as number;
    const trainer = new Trainer({
      model: new GPTMini({ vocab: tokenizer.vocabSize, context: 16, dim: 32 }),
      loss: 'cross_entropy',
      optimizer: { name: 'adamw', lr: 1e-2 },
      config: { progressBar: false, numThreads: 1, batchSize: 4, numEpochs: 40, seed: 1 },
    });
    const history = await trainer.fit(Dataset.fromTokens(documents, { contextLength: 8, stride: 1, separator }));
    expect(history.epochs[39].loss).to.be.below(history.epochs[0].loss / 4);
    const prompt = tokenizer.encode('The quick');
    const ids: number[] = [];
    for await (const id of trainer.generate(prompt, { maxNewTokens: 12, greedy: true, contextLength: 16 }))
      ids.push(id);
    expect(tokenizer.decode(ids)).to.match(/^ brown fox jumps over the/);
  });
});
