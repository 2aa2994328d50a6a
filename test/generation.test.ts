// generate(): tokens sampled in C++ from a trained language model, streamed to
// JavaScript as an async iterator; greedy, seeded, top-k/top-p, stop tokens, a
// context cropped to the position table, and errors that name the option.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { CharTokenizer, Dataset, GenerateOptions, Model, Tensor, Trainer } from '../src';
import { collect, errorOf, rejectionOf } from './support/helpers';
import { GPTMini } from '../examples/models/gpt';

const text = 'abcdefgh'.repeat(40);
const tokenizer = CharTokenizer.fromText(text);

describe('generate', function () {
  this.timeout(60_000);
  let trainer: Trainer;
  before(async () => {
    trainer = new Trainer({
      model: new GPTMini({ vocab: tokenizer.vocabSize }),
      loss: 'cross_entropy',
      optimizer: { name: 'adamw', lr: 1e-2 },
      config: { progressBar: false, numThreads: 1, batchSize: 16, numEpochs: 8 },
    });
    await trainer.fit(Dataset.fromTokens(tokenizer.encode(text), { contextLength: 8, stride: 1 }));
  });

  const generated = async (prompt: string, options: GenerateOptions) =>
    tokenizer.decode(await collect(trainer.generate(tokenizer.encode(prompt), { contextLength: 8, ...options })));

  it('continues the pattern it learned, greedily, past its context (cropped to the position table)', async () => {
    expect(await generated('abc', { maxNewTokens: 13, greedy: true })).to.equal('defghabcdefgh');
  });

  it('samples the same tokens for the same seed, and top-k 1 is greedy', async () => {
    const options = { maxNewTokens: 12, temperature: 2, seed: 7 };
    const first = await generated('ab', options);
    expect(await generated('ab', options)).to.equal(first);
    const seeds = await Promise.all([1, 2, 3, 4].map((seed) => generated('ab', { ...options, seed })));
    expect(new Set(seeds).size, 'different seeds give different samples at temperature 2').to.be.above(1);
    expect(await generated('ab', { maxNewTokens: 12, temperature: 2, topK: 1, seed: 3 })).to.equal('cdefghabcdef');
    expect(await generated('ab', { maxNewTokens: 12, topP: 0.01, seed: 3 })).to.equal('cdefghabcdef');
  });

  it('stops after a stop token, which it yields', async () => {
    const stop = tokenizer.encode('f')[0];
    expect(await generated('abc', { maxNewTokens: 20, greedy: true, stopTokens: [stop] })).to.equal('def');
  });

  it('generates from a saved and loaded model as from the trainer', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-generate-'));
    try {
      await trainer.save(path.join(folder, 'model'));
      const model = await Model.load(path.join(folder, 'model'));
      const options = { maxNewTokens: 10, temperature: 1.5, seed: 11, contextLength: 8 };
      const prompt = tokenizer.encode('cde');
      expect(await collect(model.generate(prompt, options))).to.deep.equal(
        await collect(trainer.generate(prompt, options)),
      );
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('names the option, the prompt or the position table at fault', async () => {
    const prompt = tokenizer.encode('ab');
    const cases: [GenerateOptions, string][] = [
      [{ maxNewTokens: 0 }, 'generate.maxNewTokens: got 0, expected an integer >= 1'],
      [{ maxNewTokens: 1, temperature: 0 }, 'generate.temperature: got 0.000000, expected a finite number > 0'],
      [{ maxNewTokens: 1, temperature: Infinity }, 'generate.temperature: got inf, expected a finite number > 0'],
      [
        { maxNewTokens: 1, repetitionPenalty: Infinity },
        'generate.repetitionPenalty: got inf, expected a finite number > 0',
      ],
      [{ maxNewTokens: 1, minP: 1.5 }, 'generate.minP: got 1.500000, expected a number in [0, 1]'],
      [
        { maxNewTokens: 1, noRepeatNgramSize: -1 },
        'generate.noRepeatNgramSize: got -1, expected an integer >= 0 (0: off)',
      ],
      [{ maxNewTokens: 1, topP: 1.5 }, 'generate.topP: got 1.500000, expected a number in (0, 1]'],
      [{ maxNewTokens: 1, topK: 0 }, 'generate.topK: got 0, expected an integer >= 1'],
    ];
    for (const [options, message] of cases) {
      const error = await rejectionOf(collect(trainer.generate(prompt, options)));
      expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(error.message).to.equal(message);
    }
    expect((await rejectionOf(collect(trainer.generate([], { maxNewTokens: 1 })))).message).to.contain(
      'generate: the prompt must hold at least one token id',
    );
    expect((await rejectionOf(collect(trainer.generate([1, 1.5], { maxNewTokens: 1 })))).message).to.equal(
      'generate: the prompt must hold integer token ids; prompt[1] is 1.500000',
    );
    expect(await collect(trainer.generate([0, 1, 2], { maxNewTokens: 3, greedy: true }))).to.deep.equal([3, 4, 5]);
    // With the key/value cache, the table sees the new position alone.
    for (const [kvCache, positions] of [
      [true, '[1]'],
      [false, '[9]'],
    ] as const) {
      const tooLong = await rejectionOf(
        collect(trainer.generate(tokenizer.encode('abcdefgh'), { maxNewTokens: 2, kvCache })),
      );
      expect(tooLong.message).to.equal(
        'generate, token 2 (the model saw the last 9 tokens; contextLength crops them to its position table): ' +
          `transformer.wpe (embedding): index 8 in its input ${positions} int64 is outside [0, 7] (numEmbeddings=8)`,
      );
    }
    expect(errorOf(() => tokenizer.encode('z')).code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
  });
});

/** nanoGPT's own layout: logits [batch, time, vocabulary], the classes last. */
class ClassesLastGPT extends GPTMini {
  override forward(tokens: Tensor): Tensor {
    return super.forward(tokens).transpose(1, 2);
  }
}

describe('logits with their classes last ([batch, time, vocabulary])', function () {
  this.timeout(60_000);
  const make = (vocab: number, context: number) =>
    new Trainer({
      model: new ClassesLastGPT({ vocab, context }),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { progressBar: false, numThreads: 1, batchSize: 4, numEpochs: 1 },
    });

  it('training names the layout and the fix, not the labels', async () => {
    const ids = Int32Array.from({ length: 64 }, (_, i) => i % 12);
    const error = await rejectionOf(make(12, 8).fit(Dataset.fromTokens(ids, { contextLength: 8 })));
    expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(error.message).to.contain('holds its 12 classes last').and.contain('return logits.transpose(1, 2)');
  });

  it('generate names the layout and the fix, with the cache on, off or by default', async () => {
    for (const kvCache of [undefined, true, false]) {
      const trainer = make(12, 8);
      const error = await rejectionOf(collect(trainer.generate([1, 2, 3], { maxNewTokens: 4, greedy: true, kvCache })));
      expect(error.code, `kvCache ${kvCache}`).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      expect(error.message, `kvCache ${kvCache}`)
        .to.contain('vocabulary last')
        .and.contain('return logits.transpose(1, 2)');
    }
  });
});
