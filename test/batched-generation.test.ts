// generateBatch(): several prompts decoded together as one batch, left-padded
// to the longest as transformers pads for generation, each ending at its own
// stop token; checked against each prompt alone and against transformers'
// generate on the same left-padded batch (scripts/make-pretrained-fixtures.py).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { fromPretrained, GenerateOptions, Model, Trainer } from '../src';
import { rejectionOf } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'pretrained');

interface BatchGolden {
  prompts: number[][];
  maxNewTokens: number;
  /** generate(do_sample=False) on the left-padded batch, eos_token_id None. */
  generated: number[][];
  /** The same with eos_token_id `eos`: a sequence that gave it is padded with `pad` after it. */
  eos: number;
  pad: number;
  generatedWithEos: number[][];
}

const golden: BatchGolden = JSON.parse(
  fs.readFileSync(path.join(fixtures, 'llama-batch-generation.golden.json'), 'utf8'),
);

/** Each prompt's tokens from the steps generateBatch yields, up to its end. */
async function byPrompt(steps: AsyncIterable<(number | null)[]>, prompts: number): Promise<number[][]> {
  const tokens: number[][] = Array.from({ length: prompts }, () => []);
  const ended = new Array<boolean>(prompts).fill(false);
  for await (const step of steps) {
    expect(step).to.have.length(prompts);
    step.forEach((token, i) => {
      // A prompt that ended stays ended: null at every later step.
      if (ended[i]) expect(token, `prompt ${i} after its end`).to.equal(null);
      if (token === null) ended[i] = true;
      else tokens[i].push(token);
    });
  }
  return tokens;
}

async function alone(model: Model, prompt: number[], options: GenerateOptions): Promise<number[]> {
  const tokens: number[] = [];
  for await (const token of model.generate(prompt, options)) tokens.push(token);
  return tokens;
}

describe('generateBatch: prompts decoded together', function () {
  this.timeout(120_000);
  let model: Model;
  const greedy = { maxNewTokens: golden.maxNewTokens, greedy: true, stopTokens: [] };
  before(async () => {
    const trainer = new Trainer({
      model: await fromPretrained(path.join(fixtures, 'llama'), { attentionMask: true }),
      config: { progressBar: false, numThreads: 1 },
    });
    await trainer.setup();
    model = trainer.model;
  });

  for (const kvCache of [true, false]) {
    it(`gives transformers' greedy tokens for a left-padded batch (kvCache ${kvCache})`, async () => {
      const batch = await byPrompt(model.generateBatch(golden.prompts, { ...greedy, kvCache }), golden.prompts.length);
      expect(batch).to.deep.equal(golden.generated);
    });
  }

  it("gives each chosen token's log-probability under the raw logits, as transformers' output_logits", async () => {
    const scored = JSON.parse(fs.readFileSync(path.join(fixtures, 'llama-logprobs.golden.json'), 'utf8')) as {
      prompts: number[][];
      generated: number[][];
      logprobs: number[][];
    };
    const tokens: number[][] = scored.prompts.map(() => []);
    const logprobs: number[][] = scored.prompts.map(() => []);
    for await (const step of model.generateBatchWithLogprobs(scored.prompts, { ...greedy, maxNewTokens: 8 })) {
      step.tokens.forEach((token, i) => tokens[i].push(token as number));
      step.logprobs?.forEach((logprob, i) => logprobs[i].push(logprob as number));
    }
    expect(tokens).to.deep.equal(scored.generated);
    scored.logprobs.forEach((row, i) =>
      row.forEach((expected, step) =>
        expect(logprobs[i][step], `prompt ${i}, step ${step}`).to.be.closeTo(expected, 1e-5),
      ),
    );
  });

  it('gives each prompt the tokens it gets alone', async () => {
    for (const [i, prompt] of golden.prompts.entries()) {
      expect(await alone(model, prompt, greedy), `prompt ${i}`).to.deep.equal(golden.generated[i]);
    }
  });

  it("ends each prompt at its own stop token, as transformers' eos_token_id does", async () => {
    const batch = await byPrompt(
      model.generateBatch(golden.prompts, { ...greedy, stopTokens: [golden.eos] }),
      golden.prompts.length,
    );
    // transformers pads a sequence after its end: firebrand yields null there instead.
    const expected = golden.generatedWithEos.map((tokens) => {
      const end = tokens.indexOf(golden.eos);
      return end < 0 ? tokens : tokens.slice(0, end + 1);
    });
    expect(batch).to.deep.equal(expected);
    expect(
      expected.some((tokens) => tokens.length < golden.maxNewTokens),
      'a prompt ended early',
    ).to.equal(true);
    expect(
      expected.some((tokens) => tokens.length === golden.maxNewTokens),
      'a prompt ran on',
    ).to.equal(true);
  });

  it('samples a batch the same way for the same seed, and top-k 1 is greedy', async () => {
    const sampled = (seed: number) =>
      byPrompt(
        model.generateBatch(golden.prompts, { maxNewTokens: 8, temperature: 1.5, seed, stopTokens: [] }),
        golden.prompts.length,
      );
    expect(await sampled(4)).to.deep.equal(await sampled(4));
    const topOne = await byPrompt(
      model.generateBatch(golden.prompts, { ...greedy, topK: 1, greedy: false, seed: 1 }),
      golden.prompts.length,
    );
    expect(topOne).to.deep.equal(golden.generated);
  });

  it('refuses prompts of different lengths for a model that takes the ids alone, and decodes equal ones', async () => {
    const trainer = new Trainer({
      model: await fromPretrained(path.join(fixtures, 'llama')),
      config: { progressBar: false, numThreads: 1 },
    });
    const error = await rejectionOf(byPrompt(trainer.generateBatch(golden.prompts, greedy), golden.prompts.length));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.match(/prompts of different lengths.*attentionMask: true/s);
    const equal = golden.prompts.map((prompt) => prompt.slice(0, 3));
    const batch = await byPrompt(trainer.generateBatch(equal, greedy), equal.length);
    for (const [i, prompt] of equal.entries()) {
      expect(batch[i], `prompt ${i}`).to.deep.equal(await alone(trainer.model, prompt, greedy));
    }
  });

  it('names an empty or fractional prompt by its place in the batch', async () => {
    const empty = await rejectionOf(byPrompt(model.generateBatch([[1, 2], []], greedy), 2));
    expect(empty.message).to.match(/prompts\[1\] must hold at least one token id/);
    const fractional = await rejectionOf(
      byPrompt(
        model.generateBatch(
          [
            [1, 2],
            [3, 4.5],
          ],
          greedy,
        ),
        2,
      ),
    );
    expect(fractional.message).to.match(/prompts\[1\]\[1\] is 4\.5/);
    const none = await rejectionOf(byPrompt(model.generateBatch([], greedy), 0));
    expect(none.message).to.match(/no prompts/);
  });
});
