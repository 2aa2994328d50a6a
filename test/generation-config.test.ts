// generate's defaults from a Hugging Face checkpoint's generation_config.json,
// as transformers' generate takes them (greedy unless do_sample, top_k,
// temperature, repetition_penalty, max_new_tokens, eos_token_id): tokens equal
// transformers' for each file (scripts/make-pretrained-fixtures.py), options
// override each default, Model.load keeps them, and settings generate does not
// apply are named in a warning.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { fromPretrained, GenerateOptions, Model, Trainer } from '../src';
import { rejectionOf } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'pretrained');

interface GenerationConfigGolden {
  prompt: number[];
  cases: { generationConfig: Record<string, unknown>; generated: number[] }[];
}

const golden: GenerationConfigGolden = JSON.parse(
  fs.readFileSync(path.join(fixtures, 'llama-generation-config.golden.json'), 'utf8'),
);

/** A trainer's model made from a copy of the llama fixture with `generationConfig` as its generation_config.json. */
async function llamaWith(generationConfig: Record<string, unknown>, folder: string): Promise<Trainer> {
  fs.rmSync(folder, { recursive: true, force: true });
  fs.mkdirSync(folder);
  for (const file of ['config.json', 'model.safetensors']) {
    fs.copyFileSync(path.join(fixtures, 'llama', file), path.join(folder, file));
  }
  fs.writeFileSync(path.join(folder, 'generation_config.json'), JSON.stringify(generationConfig));
  return new Trainer({
    model: await fromPretrained(folder),
    loss: 'cross_entropy',
    optimizer: 'adamw',
    config: { progressBar: false, numThreads: 1 },
  });
}

async function tokens(model: Model | Trainer, options?: GenerateOptions): Promise<number[]> {
  const all: number[] = [];
  for await (const token of model.generate(golden.prompt, options)) all.push(token);
  return all;
}

describe("generate: a checkpoint's generation_config.json gives the defaults", function () {
  this.timeout(60_000);
  let root: string;
  before(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-generation-config-'))));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  for (const [i, { generationConfig, generated }] of golden.cases.entries()) {
    it(`gives transformers' tokens for ${JSON.stringify(generationConfig)}`, async () => {
      const trainer = await llamaWith(generationConfig, path.join(root, `case-${i}`));
      expect(await tokens(trainer)).to.deep.equal(generated);
    });
  }

  it('lets options override each default, and keeps them in a saved and loaded model', async () => {
    const [penalized, sampledTopOne] = golden.cases;
    const trainer = await llamaWith(penalized.generationConfig, path.join(root, 'override'));
    const plain = golden.cases[3].generated; // greedy, no penalty
    expect(await tokens(trainer, { repetitionPenalty: 1, maxNewTokens: 6 })).to.deep.equal(plain);
    // A sampling option asks for sampling: top-k 1 samples the greedy tokens.
    expect(await tokens(trainer, { topK: 1, repetitionPenalty: 1, maxNewTokens: 8 })).to.deep.equal(
      sampledTopOne.generated,
    );
    const sampled = await Promise.all(
      [1, 2, 3].map((seed) => tokens(trainer, { greedy: false, temperature: 3, seed })),
    );
    expect(new Set(sampled.map(String)).size, 'greedy: false samples').to.be.above(1);
    const saved = path.join(root, 'saved');
    await trainer.save(saved);
    const loaded = await Model.load(saved);
    expect(await tokens(loaded)).to.deep.equal(penalized.generated);
  });

  it('names the settings it does not apply in a warning, once, and needs maxNewTokens when the file has none', async () => {
    const trainer = await llamaWith(
      { num_beams: 4, no_repeat_ngram_size: 0, do_sample: false },
      path.join(root, 'beams'),
    );
    const warnings: Error[] = [];
    const listener = (warning: Error) => warnings.push(warning);
    process.on('warning', listener);
    try {
      await tokens(trainer, { maxNewTokens: 2 });
      await tokens(trainer, { maxNewTokens: 2 });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    const ours = warnings.filter((warning) => (warning as { code?: string }).code === 'FIREBRAND_GENERATION_CONFIG');
    expect(ours).to.have.length(1);
    expect(ours[0].message).to.contain('num_beams=4').and.not.contain('no_repeat_ngram_size');
    const error = await rejectionOf(tokens(trainer));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.contain('generate.maxNewTokens: got nothing');
  });
});
