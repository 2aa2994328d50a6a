// fromPretrained's dtype: a checkpoint saved in bfloat16 (config.json's dtype) loads with its weights in
// bfloat16, as transformers 5's from_pretrained does by default, and computes what transformers computes
// in bfloat16 (scripts/make-pretrained-fixtures.py, write_bfloat16_checkpoint). bfloat16 keeps 8 bits of
// mantissa (a relative step of 2^-8): implementations that round in another order agree to a few such
// steps, transformers' own two attention implementations included, hence tolerances far above float32's
// 1e-5. That the model computes in bfloat16 shows otherwise: each logit is a bfloat16 value.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, fromPretrained, FromPretrainedOptions, loadSafetensors, Model, Trainer } from '../src';
import { expectClose } from './support/expect-close';
import { expectGreedyTokens, safetensorsDtypes, type Tensors, withPrefix } from './support/golden-tensors';
import { rejectionOf } from './support/helpers';

const folder = path.join(__dirname, '..', '..', 'test', 'fixtures', 'pretrained', 'llama-bf16');

const trainerFor = async (options: FromPretrainedOptions, source = folder, eps = 1e-8) =>
  new Trainer({
    model: await fromPretrained(source, options),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-3, eps },
    config: { progressBar: false, numThreads: 1, seed: 0, batchSize: 2, shuffle: false, numEpochs: 3 },
  });

/** Whether a float32 value is a bfloat16 one (its low 16 bits zero). */
function isBfloat16(value: number | bigint): boolean {
  return (new Uint32Array(Float32Array.of(Number(value)).buffer)[0] & 0xffff) === 0;
}

describe("fromPretrained's dtype: a bfloat16 checkpoint, against transformers in bfloat16", function () {
  this.timeout(120_000);
  let golden: Tensors;
  let metadata: Record<string, string>;
  before(async () => {
    ({ tensors: golden, metadata } = await loadSafetensors(`${folder}.golden.safetensors`));
  });

  it("gives transformers' bfloat16 logits with dtype 'auto' (config.json's) or 'bfloat16'; float32 by default", async () => {
    const logitsOf = async (options: FromPretrainedOptions) =>
      (await trainerFor(options)).predict(golden.input_ids.data, golden.input_ids.shape);
    const auto = await logitsOf({ dtype: 'auto' });
    // transformers' own eager and sdpa attention round this far apart in bfloat16 (the fixture measures it).
    const spread = Number(metadata.eagerSdpaSpread);
    expect(spread).to.be.within(0.01, 0.1);
    expectClose(auto, golden.logits, 'bfloat16 logits', { tolerance: spread, absolute: true });
    expect(Array.from(auto.data).every(isBfloat16), 'every logit is a bfloat16 value').to.equal(true);
    expect(Array.from((await logitsOf({ dtype: 'bfloat16' })).data)).to.deep.equal(Array.from(auto.data));
    // Left out, dtype is float32: the same weights, computed in float32.
    const float32 = await logitsOf({});
    expect(Array.from(float32.data).filter(isBfloat16).length).to.be.below(float32.data.length / 4);
    expectClose(float32, golden.logits, 'float32 logits', { tolerance: spread, absolute: true });
  });

  it("generates transformers' greedy tokens in bfloat16, with the cache and without", async () => {
    await expectGreedyTokens(await trainerFor({ dtype: 'auto' }), golden);
  });

  it("takes transformers' 3 AdamW steps on bfloat16 weights (the loss over float32 logits)", async () => {
    // The fixture's eps (1e-3): Adam would turn bfloat16's rounding noise in near-zero gradients into full steps.
    const trainer = await trainerFor({ dtype: 'auto' }, folder, Number(metadata.adamw_eps));
    const data = await Dataset.fromSafetensors(`${folder}.golden.safetensors`, {
      input: 'input_ids',
      target: 'target',
    });
    const history = await trainer.fit(data);
    expectClose(
      history.epochs.map((epoch) => epoch.loss),
      JSON.parse(metadata.adamw3_losses) as number[],
      'losses of the 3 steps',
      { tolerance: 1e-2 },
    );
    const state = await trainer.stateDict();
    for (const [name, expected] of Object.entries(withPrefix(golden, 'adamw3.'))) {
      // Each step rounds the weights to bfloat16, and a step of lr 1e-3 is about half a bfloat16 step at
      // these weights (below 1): rounding alone puts them up to 1.5 steps apart, 2 steps being 2^-7.
      expectClose(state[name], expected, `${name} after 3 AdamW steps`, { tolerance: 2 ** -7 });
    }
  });

  it('keeps the dtype through trainer.save and Model.load, and savePretrained writes bfloat16 as save_pretrained does', async () => {
    const trainer = await trainerFor({ dtype: 'auto' });
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-dtype-'));
    try {
      const expected = await trainer.predict(golden.input_ids.data, golden.input_ids.shape);
      await trainer.save(path.join(work, 'saved'));
      const loaded = await Model.load(path.join(work, 'saved'));
      expect(Array.from((await loaded.predict(golden.input_ids.data, golden.input_ids.shape)).data)).to.deep.equal(
        Array.from(expected.data),
      );
      await trainer.savePretrained(path.join(work, 'hf'));
      const config = JSON.parse(fs.readFileSync(path.join(work, 'hf', 'config.json'), 'utf8'));
      expect(config.dtype).to.equal('bfloat16');
      const dtypes = Object.values(safetensorsDtypes(path.join(work, 'hf', 'model.safetensors')));
      expect(dtypes).to.not.be.empty;
      expect(new Set(dtypes)).to.deep.equal(new Set(['BF16']));
      const again = await trainerFor({ dtype: 'auto' }, path.join(work, 'hf'));
      expect(Array.from((await again.predict(golden.input_ids.data, golden.input_ids.shape)).data)).to.deep.equal(
        Array.from(expected.data),
      );
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it('names a dtype it does not take, and a config dtype that auto cannot use', async () => {
    const wrong = await rejectionOf(fromPretrained(folder, { dtype: 'int8' as never }));
    expect(wrong.message).to.equal(
      'fromPretrained.dtype: expected one of float32, bfloat16, float16, float64 or \'auto\', got "int8"',
    );
    expect((wrong as { code?: string }).code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-dtype-'));
    try {
      const config = JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8'));
      fs.writeFileSync(path.join(work, 'config.json'), JSON.stringify({ ...config, dtype: 'float8_e4m3fn' }));
      const unusable = await rejectionOf(fromPretrained(work, { dtype: 'auto' }));
      expect(unusable.message).to.equal(
        `fromPretrained: ${path.join(work, 'config.json')} has dtype "float8_e4m3fn"; dtype 'auto' takes float32, bfloat16, float16, float64`,
      );
      expect((unusable as { code?: string }).code).to.equal('ERR_FIREBRAND_FILE');
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
