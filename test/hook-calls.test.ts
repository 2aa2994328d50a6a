// Every public trainer method, awaited from every hook: it works at that
// boundary or rejects at once with a code, and the fit goes on. The training
// thread waits for per-batch hooks, so a method those hooks await must not
// wait for the training thread (it used to: unfreeze and predict hung fit).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Callback, CharTokenizer, Dataset, Trainer, TrainerConfig, TrainerView } from '../src';
import { GPTMini } from '../examples/models/gpt';

const text = 'abcdefgh'.repeat(6);
const tokenizer = CharTokenizer.fromText(text);
const tokens = () => Dataset.fromTokens(tokenizer.encode(text), { contextLength: 8, stride: 4 });

/** A call that has not settled this long is reported as hung: a safety net, far above any real call. */
const HUNG_AFTER_MS = 30_000;

type Outcome = { ok: true } | { code: string; message: string } | { hung: true };

/** Each method as a hook would call it; `folder` is the cell's scratch folder. */
const METHODS: Record<string, (trainer: TrainerView, folder: string, weights: string) => Promise<unknown>> = {
  setup: (trainer) => trainer.setup(),
  predict: async (trainer) => {
    const output = await trainer.predict(new Int32Array(8).fill(1), [1, 8]);
    expect(output.shape).to.deep.equal([1, tokenizer.vocabSize, 8]);
  },
  generate: async (trainer) => {
    const generated: number[] = [];
    for await (const token of trainer.generate([0, 1], { maxNewTokens: 3, greedy: true, contextLength: 8 }))
      generated.push(token);
    expect(generated).to.have.length(3);
  },
  stateDict: async (trainer) => expect(Object.keys(await trainer.stateDict())).to.include('lm_head.weight'),
  save: (trainer, folder) => trainer.save(path.join(folder, 'saved')),
  exportTorchScript: (trainer, folder) => trainer.exportTorchScript(path.join(folder, 'model.pt')),
  initWeightsFrom: (trainer, _folder, weights) => trainer.initWeightsFrom(weights),
  freeze: async (trainer) => expect(await trainer.freeze('transformer.h.0')).to.have.length.above(0),
  unfreeze: async (trainer) => expect(await trainer.unfreeze('transformer.h.0')).to.have.length.above(0),
  setLearningRate: async (trainer) => {
    trainer.setLearningRate(0.02);
    expect(trainer.learningRates[0], 'learningRates right after setLearningRate').to.be.closeTo(0.02, 1e-12);
    trainer.setLearningRate(0.01);
    expect(trainer.learningRates[0]).to.be.closeTo(0.01, 1e-12);
  },
  learningRateNames: async (trainer) => expect(trainer.learningRateNames.length).to.be.above(0),
  namedParameters: async (trainer) => expect(trainer.namedParameters.length).to.be.above(0),
  globalStep: async (trainer) => expect(trainer.globalStep).to.be.at.least(0),
  evaluate: (trainer) => trainer.evaluate(tokens()),
  fit: (trainer) => trainer.fit(tokens()),
  saveAdapter: (trainer, folder) => trainer.saveAdapter(path.join(folder, 'adapter')),
  loadAdapter: (trainer, folder) => trainer.loadAdapter(path.join(folder, 'adapter')),
  mergeAdapter: (trainer) => trainer.mergeAdapter(),
  requestSave: async (trainer) => trainer.requestSave(),
  savePretrained: (trainer, folder) => trainer.savePretrained(path.join(folder, 'pretrained')),
};

const SETUP_HOOKS = ['preLaunch', 'preConfigure', 'postConfigure', 'preSetup'];
const PER_BATCH_HOOKS = [
  'preTrainBatch',
  'onBatchBegin',
  'postTrainBatch',
  'onBatchEnd',
  'preValBatch',
  'postValBatch',
];
const FIT_HOOKS = [
  'postSetup',
  'preFit',
  'onTrainBegin',
  'preEpoch',
  'onEpochBegin',
  ...PER_BATCH_HOOKS,
  'preValidation',
  'postValidation',
  'postEpoch',
  'onEpochEnd',
  'onSaveCheckpoint',
  'postFit',
  'onTrainEnd',
  'onException',
];
// Methods that need the engine fail in a setup hook before the model exists; these do not.
const WITHOUT_ENGINE = new Set(['saveAdapter', 'loadAdapter', 'mergeAdapter', 'namedParameters']);
// Methods for a LoRA trainer, or a model fromPretrained made, only: this one is neither, which they say
// at once (test/pretrained.test.ts awaits savePretrained from a batch hook of a pretrained model).
const LORA_ONLY = new Set(['saveAdapter', 'loadAdapter', 'mergeAdapter', 'savePretrained']);

/** What `method` must do when awaited from `hook` of a fit (with outputDir, no LoRA). */
function expected(method: string, hook: string): 'ok' | 'coded' {
  if (LORA_ONLY.has(method) || method === 'fit') return 'coded';
  if (SETUP_HOOKS.includes(hook)) return WITHOUT_ENGINE.has(method) ? 'ok' : 'coded';
  // requestSave asks the running fit for a checkpoint: the fit runs from preFit to postFit.
  if (method === 'requestSave') return hook === 'postSetup' ? 'coded' : 'ok';
  // An evaluation runs batches of its own, which a per-batch hook (awaited by a batch) cannot wait for.
  if (method === 'evaluate') return PER_BATCH_HOOKS.includes(hook) ? 'coded' : 'ok';
  return 'ok';
}

async function outcomeOf(call: () => Promise<unknown>): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ hung: true }), HUNG_AFTER_MS);
  });
  const settled = call().then(
    (): Outcome => ({ ok: true }),
    (error: Error & { code?: string }): Outcome => ({ code: String(error.code), message: error.message }),
  );
  try {
    return await Promise.race([settled, hung]);
  } finally {
    clearTimeout(timer);
  }
}

function matrixTrainer(folder: string, callback: Callback, config: Partial<TrainerConfig> = {}): Trainer {
  return new Trainer({
    model: new GPTMini({ vocab: tokenizer.vocabSize, dim: 8, layers: 1 }),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 0.01 },
    callbacks: [callback],
    config: {
      numEpochs: 1,
      batchSize: 4,
      progressBar: false,
      numThreads: 1,
      outputDir: path.join(folder, 'run'),
      seed: 1,
      ...config,
    },
  });
}

describe('trainer methods awaited from hooks', function () {
  this.timeout(300_000);
  let root: string;
  let weights: string;
  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-hook-calls-'));
    const source = matrixTrainer(root, {});
    await source.save(path.join(root, 'weights'));
    weights = path.join(root, 'weights', 'model.safetensors');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  for (const hook of [...SETUP_HOOKS, ...FIT_HOOKS]) {
    it(`${hook}: every method works there or rejects at once with a code, and fit goes on`, async () => {
      const folder = fs.mkdtempSync(path.join(root, `${hook}-`));
      const outcomes: Record<string, Outcome> = {};
      let called = false;
      const callback: Callback = {
        [hook]: async (...args: unknown[]) => {
          if (called) return;
          called = true;
          const trainer = args.find((arg): arg is Trainer => arg instanceof Trainer) ?? current;
          for (const [name, method] of Object.entries(METHODS)) {
            outcomes[name] = await outcomeOf(() => method(trainer, folder, weights));
          }
        },
        // onException needs a failing fit: the epoch's end fails once everything else ran.
        ...(hook === 'onException' ? { postEpoch: () => Promise.reject(new Error('the fit fails here')) } : {}),
      };
      const current = matrixTrainer(folder, callback, { evalBatchSize: 4 });
      const fitting = current.fit(tokens(), { evalData: tokens() });
      if (hook === 'onException') {
        expect((await fitting.catch((error: Error) => error)) as Error).to.be.an('error');
      } else {
        await fitting;
      }
      expect(called, `${hook} ran`).to.equal(true);
      const wrong: string[] = [];
      for (const [name, outcome] of Object.entries(outcomes)) {
        const want = expected(name, hook);
        if ('hung' in outcome) wrong.push(`${name}: never settled`);
        else if (want === 'ok' && !('ok' in outcome))
          wrong.push(`${name}: expected to work, got ${outcome.code}: ${outcome.message}`);
        else if (want === 'coded' && 'ok' in outcome) wrong.push(`${name}: expected a coded refusal, but it ran`);
        else if ('code' in outcome && !outcome.code.startsWith('ERR_FIREBRAND_'))
          wrong.push(`${name}: uncoded error ${outcome.message}`);
      }
      expect(wrong, `${hook}:\n${wrong.join('\n')}`).to.deep.equal([]);
    });
  }

  it('freeze, unfreeze and initWeightsFrom inside an accumulation group are refused, naming why; at its edges they work', async () => {
    const folder = fs.mkdtempSync(path.join(root, 'accumulation-'));
    const seen: string[] = [];
    const record = async (where: string, trainer: TrainerView) => {
      for (const name of ['freeze', 'unfreeze', 'initWeightsFrom']) {
        const outcome = await outcomeOf(() => METHODS[name](trainer, folder, weights));
        seen.push(`${where} ${name}: ${'ok' in outcome ? 'ok' : 'code' in outcome ? outcome.code : 'hung'}`);
        if ('code' in outcome)
          expect(outcome.message).to.contain('inside a gradient-accumulation group (1 of its 2 micro-batches');
      }
    };
    const trainer = matrixTrainer(
      folder,
      {
        preTrainBatch: ({ batch, globalStep }, trainer) =>
          globalStep === 0 ? record(`pre ${batch}`, trainer) : undefined,
        postTrainBatch: ({ batch, globalStep }, trainer) =>
          globalStep <= 1 && batch <= 1 ? record(`post ${batch}`, trainer) : undefined,
      },
      { gradientAccumulationSteps: 2, outputDir: undefined },
    );
    await trainer.fit(tokens());
    const refused = 'ERR_FIREBRAND_INVALID_STATE';
    expect(seen).to.deep.equal([
      ...['freeze', 'unfreeze', 'initWeightsFrom'].map((name) => `pre 0 ${name}: ok`),
      ...['freeze', 'unfreeze', 'initWeightsFrom'].map((name) => `post 0 ${name}: ${refused}`),
      ...['freeze', 'unfreeze', 'initWeightsFrom'].map((name) => `pre 1 ${name}: ${refused}`),
      ...['freeze', 'unfreeze', 'initWeightsFrom'].map((name) => `post 1 ${name}: ok`),
    ]);
  });

  it('a fit is refused from outside while another runs, but stateDict and predict run between its steps', async () => {
    const folder = fs.mkdtempSync(path.join(root, 'outside-'));
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const trainer = matrixTrainer(folder, { postTrainBatch: () => held }, { outputDir: undefined });
    const fitting = trainer.fit(tokens());
    const state = trainer.stateDict();
    const refusal = await trainer.fit(tokens()).catch((error: Error & { code?: string }) => error);
    expect((refusal as { code?: string }).code).to.equal('ERR_FIREBRAND_INVALID_STATE');
    expect(Object.keys(await state)).to.include('lm_head.weight');
    release();
    await fitting;
  });
});
