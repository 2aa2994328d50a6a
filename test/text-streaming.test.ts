// Text from generated tokens: TextStreamer gives each token's text once its
// characters are whole (transformers' TextIteratorStreamer; byte-level BPE and
// byte-fallback tokenizers split accents, CJK and emoji over several tokens),
// StopStrings cut the text before a stop, and generateText streams a model's
// continuation with both.
import { expect } from 'chai';
import path from 'node:path';

import { fromPretrained, HuggingFaceTokenizer, StopStrings, TextStreamer, Trainer } from '../src';
import { collect, rejectionOf } from './support/helpers';

const tokenizers = path.join(__dirname, '..', '..', 'test', 'fixtures', 'tokenizers');
const chatModel = path.join(__dirname, '..', '..', 'examples', 'data', 'tiny-chat-llama');
const TEXT = 'Café in 東京 🙂, naïve façade — 日本語のテキスト 👩‍💻!';

describe('streaming text from tokens', function () {
  this.timeout(60_000);

  for (const name of ['gpt2-style', 'llama-style']) {
    it(`never splits a character (${name})`, () => {
      const tokenizer = HuggingFaceTokenizer.fromFile(path.join(tokenizers, name));
      const ids = Array.from(tokenizer.encode(TEXT, { addSpecialTokens: false }));
      // Token by token, the text breaks: what a stream must not show.
      expect(ids.map((id) => tokenizer.decode([id])).join('')).to.contain('\uFFFD');
      const streamer = new TextStreamer(tokenizer);
      const pieces = ids.map((id) => streamer.push(id));
      pieces.push(streamer.end());
      expect(pieces.join('')).to.equal(tokenizer.decode(ids));
      expect(pieces.join('')).to.equal(TEXT);
      for (const piece of pieces) expect(piece).to.not.contain('\uFFFD');
      expect(pieces.filter((piece) => piece !== '').length, 'pieces come as characters complete').to.be.above(10);
    });
  }

  it('cuts the text before the first stop string, even one that spans pieces, and releases text that is none', () => {
    const stops = new StopStrings(['<END>', 'STOP']);
    expect(stops.push('Hello <E')).to.equal('Hello ');
    expect(stops.push('xtra ST')).to.equal('<Extra ');
    expect(stops.found).to.equal(false);
    expect(stops.push('OP and more')).to.equal('');
    expect(stops.found).to.equal(true);
    expect(stops.push('after')).to.equal('');
    const open = new StopStrings(['<END>']);
    expect(open.push('ends with <EN')).to.equal('ends with ');
    expect(open.end()).to.equal('<EN');
  });

  it("streams a model's greedy continuation as the tokens' text, without the stop token's, to a stop string", async () => {
    const tokenizer = await HuggingFaceTokenizer.fromPretrained(chatModel);
    const trainer = new Trainer({ model: await fromPretrained(chatModel), config: { progressBar: false } });
    const prompt = tokenizer.applyChatTemplate([{ role: 'user', content: 'Café?' }], { addGenerationPrompt: true });
    const options = { maxNewTokens: 24, greedy: true };
    const ids = await collect(trainer.generate(prompt, options));
    const eos = tokenizer.specialTokenId('eos');
    const text = tokenizer.decode(ids.filter((id) => id !== eos));
    const pieces = await collect(trainer.generateText(prompt, tokenizer, options));
    expect(pieces.join('')).to.equal(text);
    // A stop string from the middle of that text ends it there.
    const stop = text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 3);
    const cut = (await collect(trainer.generateText(prompt, tokenizer, { ...options, stopStrings: [stop] }))).join('');
    expect(cut).to.equal(text.slice(0, text.indexOf(stop)));
    const bad = await rejectionOf(collect(trainer.generateText(prompt, tokenizer, { ...options, stopStrings: [''] })));
    expect(bad.message).to.match(/stopStrings must be an array of non-empty strings/);
  });
});
