// Hugging Face checkpoints as transformers 5.12 writes them (tiny random
// configs, scripts/make-pretrained-fixtures.py in the sid chroot): fromPretrained
// builds the architecture from config.json and loads model.safetensors, and the
// model computes transformers' logits and greedy tokens.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  ChatMessage,
  ChatTemplateOptions,
  Dataset,
  fromPretrained,
  FromPretrainedOptions,
  HuggingFaceTokenizer,
  loadSafetensors,
  Model,
  Trainer,
  TensorData,
  TrainerOptions,
} from '../src';
import { expectClose } from './support/expect-close';
import { expectGreedyTokens, expectStateClose, stepTaken, type Tensors, withPrefix } from './support/golden-tensors';
import { errorOf, pythonJson, rejectionOf, seededRandom } from './support/helpers';
import { startHub, type Hub } from './support/hub-server';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'pretrained');

const trainerFor = async (
  folder: string,
  optimizer: TrainerOptions['optimizer'] = 'adamw',
  config: TrainerOptions['config'] = {},
  options: FromPretrainedOptions = {},
) =>
  new Trainer({
    model: await fromPretrained(folder, options),
    loss: 'cross_entropy',
    optimizer,
    config: { progressBar: false, numThreads: 1, seed: 0, batchSize: 2, shuffle: false, ...config },
  });

/** Runs `body` on a temporary copy of the llama fixture's config and weights, `config` merged into its config.json. */
async function withLlamaCopy(config: object, body: (folder: string) => Promise<void>): Promise<void> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-pretrained-'));
  try {
    fs.copyFileSync(path.join(fixtures, 'llama', 'model.safetensors'), path.join(folder, 'model.safetensors'));
    const original = JSON.parse(fs.readFileSync(path.join(fixtures, 'llama', 'config.json'), 'utf8'));
    fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify({ ...original, ...config }));
    await body(folder);
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

/** The golden file's inputs, under transformers' argument names. */
const GOLDEN_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids', 'pixel_values'];

/**
 * How a checkpoint's golden inputs feed the model: a model of one input takes the one the golden file
 * holds as 'input'; one of several (BERT) takes them by their own names.
 */
function inputsOf(model: { inputFields(): string[] }, golden: Tensors): Record<string, string> {
  const given = GOLDEN_INPUTS.filter((name) => name in golden);
  return model.inputFields().length === 1 ? { input: given[0] } : Object.fromEntries(given.map((name) => [name, name]));
}

/**
 * A causal LM's logits [batch, vocabulary, time] with the padding positions of the golden batch zeroed,
 * as the fixture zeroes them (what each implementation computes there is its own; nothing reads it).
 */
function withoutPadding(logits: TensorData, golden: Tensors): TensorData {
  const mask = golden.attention_mask;
  const [batch, vocabulary, time] = logits.shape;
  const data = Float32Array.from(logits.data, (value, i) => {
    const [b, t] = [Math.floor(i / (vocabulary * time)), i % time];
    return Number(mask.data[b * time + t]) === 0 ? 0 : value;
  });
  return { data, shape: [batch, vocabulary, time] };
}

describe('fromPretrained: Hugging Face checkpoints, against transformers', function () {
  this.timeout(120_000);
  const causalLMs = [
    'gpt2',
    'llama',
    'qwen2',
    'mistral',
    'llama-rope-linear',
    'llama-rope-llama3',
    'llama-rope-yarn',
    'llama-rope-longrope',
    'qwen2-sliding',
  ];
  for (const name of [...causalLMs, 'llama-padded', 'bert-mlm', 'bert-classifier', 'vit']) {
    describe(name, () => {
      const goldenFile = path.join(fixtures, `${name}.golden.safetensors`);
      let golden: Tensors;
      let metadata: Record<string, string>;
      let trainer: Trainer;
      let fields: Record<string, string>;
      // The padded Llama batch takes its attention mask by name.
      const options = name === 'llama-padded' ? { attentionMask: true } : {};
      const trainerOf = (optimizer?: TrainerOptions['optimizer'], config?: TrainerOptions['config']) =>
        trainerFor(path.join(fixtures, name), optimizer, config, options);
      before(async () => {
        ({ tensors: golden, metadata } = await loadSafetensors(goldenFile));
        const model = await fromPretrained(path.join(fixtures, name), options);
        fields = inputsOf(model, golden);
        trainer = await trainerOf();
      });

      it(`gives transformers' logits${name.startsWith('bert') ? ', padding masked out' : ''}`, async () => {
        const logits =
          'input' in fields
            ? await trainer.predict(golden[fields.input].data, golden[fields.input].shape)
            : await trainer.predict(Object.fromEntries(Object.keys(fields).map((field) => [field, golden[field]])));
        const zeroed = metadata.logitsAtPaddingZeroed === 'true';
        expectClose(zeroed ? withoutPadding(logits, golden) : logits, golden.logits, `${name} logits`);
      });

      it("computes transformers' gradients and takes its 3 AdamW steps", async () => {
        const data = await Dataset.fromSafetensors(goldenFile, { ...fields, target: 'target' });
        const sgd = await trainerOf({ name: 'sgd', lr: 1 }, { numEpochs: 1 });
        const before = await sgd.stateDict();
        await sgd.fit(data);
        const after = await sgd.stateDict();
        for (const [parameter, grad] of Object.entries(withPrefix(golden, 'grad.'))) {
          expectClose(stepTaken(before[parameter], after[parameter]), grad, `gradient of ${parameter}`);
        }
        // The fixture's eps (see adamw_eps in scripts/make-pretrained-fixtures.py).
        const eps = Number(metadata.adamw_eps);
        const adamw = await trainerOf({ name: 'adamw', eps }, { numEpochs: 3 });
        const history = await adamw.fit(data);
        const losses = JSON.parse(metadata.adamw3_losses) as number[];
        expectClose(
          history.epochs.map((epoch) => epoch.loss),
          losses,
          'losses of the 3 steps',
        );
        expectStateClose(await adamw.stateDict(), withPrefix(golden, 'adamw3.'), 'after 3 AdamW steps');
      });

      if (!causalLMs.includes(name)) return;
      // Mistral's and Qwen2's windows (4 positions) are shorter than the prompt: the cache keeps the last 3.
      it("generates transformers' greedy tokens, with the cache and without", async () => {
        await expectGreedyTokens(trainer, golden);
      });
    });
  }

  it('writes a fine-tuned model back as a checkpoint that fromPretrained (and transformers, where it is) loads to the same logits', async function () {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-pretrained-'));
    try {
      const trainedLogits: Record<string, Float32Array> = {};
      // qwen2-lora: LoRA on PEFT's Llama targets (q_proj, v_proj), merged before saving.
      for (const name of ['gpt2', 'qwen2', 'qwen2-lora']) {
        const lora = name === 'qwen2-lora';
        const trainer = new Trainer({
          model: await fromPretrained(path.join(fixtures, lora ? 'qwen2' : name)),
          loss: 'cross_entropy',
          optimizer: { name: 'adamw', lr: 1e-2 },
          ...(lora ? { lora: { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] } } : {}),
          config: { progressBar: false, numThreads: 1, seed: 0, batchSize: 2, shuffle: false },
        });
        const random = seededRandom(7);
        const tokens = Array.from({ length: 200 }, () => Math.floor(random() * 64));
        await trainer.fit(Dataset.fromTokens(tokens, { contextLength: 8 }), { numEpochs: 1 });
        if (lora) await trainer.mergeAdapter();
        const saved = path.join(folder, name);
        await trainer.savePretrained(saved);
        expect(fs.readdirSync(saved).sort()).to.deep.equal([
          'config.json',
          'generation_config.json',
          'model.safetensors',
        ]);
        const ids = { data: new BigInt64Array([3n, 17n, 42n, 5n, 9n, 60n, 1n, 33n]), shape: [1, 8] };
        const trained = await trainer.predict(ids.data, ids.shape);
        const reloaded = await (await trainerFor(saved)).predict(ids.data, ids.shape);
        expectClose(reloaded, trained, `${name} reloaded`, { tolerance: 0 });
        trainedLogits[name] = trained.data;
      }
      const script = `import json, sys
try:
    import transformers, torch
except ImportError as error:
    print(json.dumps({'missing': str(error)})); sys.exit(0)
logits = {}
for name in sys.argv[2:]:
    model = transformers.AutoModelForCausalLM.from_pretrained(sys.argv[1] + '/' + name).eval()
    with torch.no_grad():
        logits[name] = model(torch.tensor([[3, 17, 42, 5, 9, 60, 1, 33]])).logits.transpose(1, 2).flatten().tolist()
print(json.dumps(logits))`;
      const python = pythonJson(this, script, folder, ...Object.keys(trainedLogits)) as Record<string, number[]> & {
        missing?: string;
      };
      if (python.missing !== undefined) {
        console.log(`      skipped the check with transformers' from_pretrained: ${python.missing}`);
        this.skip();
      }
      for (const [name, logits] of Object.entries(trainedLogits))
        expectClose(python[name], logits, `${name} loaded by transformers`);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('writes savePretrained awaited from a batch hook, between two steps, without holding up the fit', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-pretrained-hook-'));
    try {
      const saved = path.join(folder, 'at-step-2');
      const trainer: Trainer = new Trainer({
        model: await fromPretrained(path.join(fixtures, 'qwen2')),
        loss: 'cross_entropy',
        optimizer: 'adamw',
        callbacks: [
          {
            async postTrainBatch({ globalStep }) {
              if (globalStep === 2) await trainer.savePretrained(saved);
            },
          },
        ],
        config: { progressBar: false, numThreads: 1, seed: 0, batchSize: 2, numEpochs: 1 },
      });
      const random = seededRandom(3);
      const tokens = Array.from({ length: 65 }, () => Math.floor(random() * 64));
      const history = await trainer.fit(Dataset.fromTokens(tokens, { contextLength: 8 }));
      expect(history.epochs[0].steps).to.equal(4);
      expect(fs.readdirSync(saved).sort()).to.deep.equal([
        'config.json',
        'generation_config.json',
        'model.safetensors',
      ]);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("stops generating at generation_config.json's eos_token_id unless stopTokens says otherwise", () =>
    withLlamaCopy({}, async (folder) => {
      const golden = (await loadSafetensors(path.join(fixtures, 'llama.golden.safetensors'))).tensors;
      const prompt = Array.from(golden.input_ids.data, Number).slice(0, golden.input_ids.shape[1]);
      const expected = Array.from(golden.generated.data, Number);
      // The second generated token as the end of sequence.
      fs.writeFileSync(
        path.join(folder, 'generation_config.json'),
        JSON.stringify({ eos_token_id: [expected[1], 63] }),
      );
      const trainer = await trainerFor(folder);
      const generate = async (stopTokens?: number[]) => {
        const tokens: number[] = [];
        for await (const token of trainer.generate(prompt, {
          maxNewTokens: expected.length,
          greedy: true,
          stopTokens,
        })) {
          tokens.push(token);
        }
        return tokens;
      };
      expect(await generate()).to.deep.equal(expected.slice(0, 2));
      expect(await generate([])).to.deep.equal(expected);
    }));

  it('names the model_type it does not know, and the ones it does', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-pretrained-'));
    try {
      fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify({ model_type: 'bloom' }));
      const error = await rejectionOf(fromPretrained(folder));
      expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(error.message)
        .to.contain('model_type "bloom"')
        .and.contain('supported: gpt2, llama, qwen2, mistral, bert, vit');
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('builds another head on a checkpoint (architecture, numLabels): the body loaded, the new head initialized and named', async () => {
    const mlm = await trainerFor(path.join(fixtures, 'bert-mlm'));
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (message: string) => warnings.push(message);
    try {
      const classifier = await trainerFor(
        path.join(fixtures, 'bert-mlm'),
        'adamw',
        {},
        {
          architecture: 'BertForSequenceClassification',
          numLabels: 3,
        },
      );
      const state = await classifier.stateDict();
      expect(state['classifier.weight'].shape).to.deep.equal([3, 16]);
      // The body's values come from the file and are not drawn at the build; the new head, in no file, is drawn.
      expect(new Set(state['classifier.weight'].data as Float32Array).size).to.be.greaterThan(40);
      const body = await mlm.stateDict();
      for (const name of Object.keys(body).filter((name) => name.startsWith('bert.')))
        expect(state[name].data, name).to.deep.equal(body[name].data);
    } finally {
      console.warn = warn;
    }
    expect(warnings.join('\n')).to.contain('newly initialized').and.contain('classifier.weight');
    const wrong = await rejectionOf(fromPretrained(path.join(fixtures, 'bert-mlm'), { architecture: 'BertModel' }));
    expect(wrong.message).to.contain("architecture 'BertModel' is not one of model_type 'bert''s");
  });

  it('refuses attentionMask for an architecture that does not take it', async () => {
    const error = await rejectionOf(fromPretrained(path.join(fixtures, 'vit'), { attentionMask: true }));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.contain('fromPretrained.attentionMask: ViTForImageClassification does not take it');
  });

  it('names a rope scaling kind it does not support, and says why dynamic is not', async () => {
    for (const [kind, why] of [
      ['su', "rope_type 'su' is not supported; supported: default, linear, llama3, yarn, longrope"],
      ['dynamic', "rope_type 'dynamic' is not supported (its frequencies depend on the longest sequence"],
    ]) {
      await withLlamaCopy({ rope_parameters: { rope_type: kind, rope_theta: 10000, factor: 2 } }, async (folder) => {
        const error = await rejectionOf(fromPretrained(folder));
        expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
        expect(error.message).to.contain(why);
      });
    }
    await withLlamaCopy({ rope_parameters: { rope_type: 'llama3', rope_theta: 10000, factor: 8 } }, async (folder) => {
      const error = await rejectionOf(fromPretrained(folder));
      expect(error.message).to.contain("rope_type 'llama3' needs a number for rope_parameters.low_freq_factor");
    });
  });

  it('names every weight whose shape does not fit the config', () =>
    withLlamaCopy({ intermediate_size: 48 }, async (folder) => {
      const error = await rejectionOf((await trainerFor(folder)).setup());
      expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      expect(error.message).to.contain('6 weights do not fit the model');
      for (const layer of [0, 1]) {
        for (const projection of ['gate_proj', 'up_proj', 'down_proj']) {
          expect(error.message).to.contain(`'model.layers.${layer}.mlp.${projection}.weight' has shape`);
        }
      }
    }));

  it('names every weight that is missing or foreign when the files do not fit the config', () =>
    withLlamaCopy({ num_hidden_layers: 3 }, async (folder) => {
      const error = await rejectionOf((await trainerFor(folder)).setup());
      expect(error.code).to.equal('ERR_FIREBRAND_FILE');
      expect(error.message).to.contain('model.layers.2.self_attn.q_proj.weight').and.contain('are in no file');
    }));
});

describe('fromPretrained with hub ids, against a loopback hub', function () {
  this.timeout(120_000);
  const variables = ['HF_HOME', 'HF_HUB_CACHE', 'HF_ENDPOINT', 'HF_TOKEN', 'HF_HUB_OFFLINE'] as const;
  const saved = Object.fromEntries(variables.map((name) => [name, process.env[name]]));
  let home: string;
  let hub: Hub | undefined;
  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-hf-home-'));
    for (const name of variables) delete process.env[name];
    process.env.HF_HOME = home;
  });
  afterEach(async () => {
    await hub?.close();
    hub = undefined;
    for (const name of variables) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    fs.rmSync(home, { recursive: true, force: true });
  });

  it("downloads into Hugging Face's cache layout with HF_TOKEN, then loads from the cache with the hub gone", async () => {
    hub = await startHub([{ id: 'firebrand/tiny-llama', folder: path.join(fixtures, 'llama') }], {
      token: 'hf_firebrand',
    });
    process.env.HF_ENDPOINT = hub.url;
    process.env.HF_TOKEN = 'hf_firebrand';
    const golden = (await loadSafetensors(path.join(fixtures, 'llama.golden.safetensors'))).tensors;
    const logitsOf = async () =>
      (await trainerFor('firebrand/tiny-llama')).predict(golden.input_ids.data, golden.input_ids.shape);
    expectClose(await logitsOf(), golden.logits, 'logits of the downloaded checkpoint');
    const storage = path.join(home, 'hub', 'models--firebrand--tiny-llama');
    const commit = fs.readFileSync(path.join(storage, 'refs', 'main'), 'utf8');
    expect(commit).to.match(/^[0-9a-f]{40}$/);
    const snapshot = path.join(storage, 'snapshots', commit);
    expect(fs.readdirSync(snapshot).sort()).to.deep.equal([
      'config.json',
      'generation_config.json',
      'model.safetensors',
    ]);
    for (const file of fs.readdirSync(snapshot)) {
      expect(fs.lstatSync(path.join(snapshot, file)).isSymbolicLink(), `${file} links into blobs/`).to.equal(true);
    }
    expect(hub.requests.filter((request) => request.includes('/resolve/'))).to.have.length.greaterThan(0);

    await hub.close();
    hub = undefined;
    expectClose(await logitsOf(), golden.logits, 'logits with the hub unreachable (from the cache)');
    process.env.HF_HUB_OFFLINE = '1';
    expectClose(await logitsOf(), golden.logits, 'logits with HF_HUB_OFFLINE=1');
  });

  it('says what failed when the hub refuses and the cache has nothing, and names the revision offline', async () => {
    hub = await startHub([{ id: 'firebrand/tiny-llama', folder: path.join(fixtures, 'llama') }], {
      token: 'hf_firebrand',
    });
    process.env.HF_ENDPOINT = hub.url;
    const refused = await rejectionOf(fromPretrained('firebrand/tiny-llama'));
    expect(refused.code).to.equal('ERR_FIREBRAND_FILE');
    expect(refused.message).to.contain(`cannot download revision 'main' from ${hub.url}`);
    process.env.HF_HUB_OFFLINE = '1';
    const offline = await rejectionOf(fromPretrained('firebrand/tiny-llama', { revision: 'v1' }));
    expect(offline.message).to.contain('HF_HUB_OFFLINE is set and the cache').and.contain("at revision 'v1'");
  });
});

describe("HuggingFaceTokenizer.fromPretrained: a checkpoint's tokenizer and chat template, against transformers", () => {
  interface ChatCase {
    messages: ChatMessage[];
    addGenerationPrompt: boolean;
    text: string;
    ids: number[];
  }
  const golden = JSON.parse(fs.readFileSync(path.join(fixtures, 'chat-tokenizer.golden.json'), 'utf8')) as {
    bosTokenId: number;
    eosTokenId: number;
    cases: ChatCase[];
  };

  it("renders transformers' apply_chat_template text and ids, with the special tokens in scope", async () => {
    const tokenizer = await HuggingFaceTokenizer.fromPretrained(path.join(fixtures, 'chat-tokenizer'));
    expect(tokenizer.specialTokens).to.deep.equal({ bos: '<s>', eos: '</s>', unk: '<unk>' });
    expect([tokenizer.specialTokenId('bos'), tokenizer.specialTokenId('eos')]).to.deep.equal([
      golden.bosTokenId,
      golden.eosTokenId,
    ]);
    for (const { messages, addGenerationPrompt, text, ids } of golden.cases) {
      const what = `${messages.length} messages, addGenerationPrompt ${addGenerationPrompt}`;
      expect(tokenizer.applyChatTemplate(messages, { addGenerationPrompt, tokenize: false }), what).to.equal(text);
      expect(Array.from(tokenizer.applyChatTemplate(messages, { addGenerationPrompt })), what).to.deep.equal(ids);
    }
  });

  it('renders tools, documents, template variables, content parts and a continued reply as apply_chat_template does', async () => {
    const extras = JSON.parse(fs.readFileSync(path.join(fixtures, 'chat-tokenizer-extras.golden.json'), 'utf8')) as {
      template: string;
      cases: (ChatTemplateOptions & { messages: ChatMessage[]; text: string; ids: number[] })[];
    };
    const tokenizer = await HuggingFaceTokenizer.fromPretrained(path.join(fixtures, 'chat-tokenizer'));
    for (const { messages, text, ids, ...options } of extras.cases) {
      const what = JSON.stringify(options);
      const rendered = tokenizer.applyChatTemplate(messages, {
        ...options,
        chatTemplate: extras.template,
        tokenize: false,
      });
      expect(rendered, what).to.equal(text);
      const encoded = tokenizer.applyChatTemplate(messages, { ...options, chatTemplate: extras.template });
      expect(Array.from(encoded), what).to.deep.equal(ids);
    }
    const both = errorOf(() =>
      tokenizer.applyChatTemplate(extras.cases[3].messages, { continueFinalMessage: true, addGenerationPrompt: true }),
    );
    expect(both.message).to.contain('continueFinalMessage and addGenerationPrompt exclude each other');
    const misspelt = errorOf(() => tokenizer.applyChatTemplate(extras.cases[0].messages, { tool: [] } as never));
    expect(misspelt.message).to.contain("applyChatTemplate options: unknown option 'tool'");
  });

  it('says plainly when the tokenizer files or the chat template are missing', async () => {
    const missing = await rejectionOf(HuggingFaceTokenizer.fromPretrained(path.join(fixtures, 'llama')));
    expect(missing.code).to.equal('ERR_FIREBRAND_FILE');
    expect(missing.message).to.contain('has no tokenizer.json');
    const plain = HuggingFaceTokenizer.fromFile(
      path.join(__dirname, '..', '..', 'test', 'fixtures', 'tokenizers', 'llama-style'),
    );
    const error = errorOf(() => plain.applyChatTemplate([{ role: 'user', content: 'hi' }]));
    expect(error.message).to.contain('has no chat template');
  });
});

describe('a pretrained Llama through the rest of the trainer', function () {
  this.timeout(120_000);
  const folder = path.join(fixtures, 'llama');
  const goldenFile = path.join(fixtures, 'llama.golden.safetensors');
  const fitted = async (config: TrainerOptions['config']) => {
    const trainer = await trainerFor(folder, 'adamw', { numEpochs: 2, ...config });
    const history = await trainer.fit(
      await Dataset.fromSafetensors(goldenFile, { input: 'input_ids', target: 'target' }),
    );
    return { trainer, history, state: await trainer.stateDict() };
  };
  let plain: Awaited<ReturnType<typeof fitted>>;
  let initial: Tensors;
  before(async () => {
    plain = await fitted({});
    initial = await (await trainerFor(folder)).stateDict();
  });

  it('freezes modules by path: their weights stay as loaded, the others train', async () => {
    const { state } = await fitted({ freeze: ['model.layers.0'] });
    for (const name of Object.keys(state)) {
      const moved = state[name].data.some((value, i) => value !== initial[name].data[i]);
      expect(moved, name).to.equal(!name.startsWith('model.layers.0.'));
    }
  });

  it('recomputes checkpointed decoder layers in backward to the same weights', async () => {
    const { history, state } = await fitted({ activationCheckpointing: ['model.layers.*'] });
    expect(history.epochs.map((epoch) => epoch.loss)).to.deep.equal(plain.history.epochs.map((epoch) => epoch.loss));
    expectStateClose(state, plain.state, 'with activation checkpointing');
  });

  it('trains under bf16 autocast to losses near float32 ones', async () => {
    const { history } = await fitted({ mixedPrecision: 'bf16' });
    history.epochs.forEach((epoch, i) => expect(epoch.loss).to.be.closeTo(plain.history.epochs[i].loss, 0.05));
  });

  it('ends on the averaged weights with EMA (decay 0: the last weights themselves)', async () => {
    expectStateClose((await fitted({ ema: { enabled: true, decay: 0 } })).state, plain.state, 'EMA of decay 0');
    const averaged = (await fitted({ ema: { enabled: true, decay: 0.9 } })).state;
    const differs = Object.keys(averaged).some((name) =>
      averaged[name].data.some((v, i) => v !== plain.state[name].data[i]),
    );
    expect(differs, 'EMA of decay 0.9 differs from the last weights').to.equal(true);
  });

  it('saves with trainer.save and predicts the same through Model.load', async () => {
    const saved = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-llama-saved-'));
    try {
      await plain.trainer.save(saved);
      const ids = { data: new BigInt64Array([3n, 17n, 42n, 5n, 9n, 60n, 1n, 33n]), shape: [1, 8] };
      const model = await Model.load(saved);
      expectClose(
        await model.predict(ids.data, ids.shape),
        await plain.trainer.predict(ids.data, ids.shape),
        'Model.load',
        {
          tolerance: 0,
        },
      );
    } finally {
      fs.rmSync(saved, { recursive: true, force: true });
    }
  });
});
