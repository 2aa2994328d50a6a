// LoRA adapters as PEFT writes and reads them, on a Hugging Face checkpoint:
// test/fixtures/pretrained/qwen2-peft-adapter is PEFT's own save_pretrained
// (scripts/make-pretrained-fixtures.py, with PEFT's source on PYTHONPATH, since
// Debian packages no peft), beside the logits PEFT's PeftModel computes with it.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  Dataset,
  fromPretrained,
  FromPretrainedOptions,
  loadPretrainedModel,
  loadSafetensors,
  saveSafetensors,
  Trainer,
} from '../src';
import { expectClose } from './support/expect-close';
import { safetensorsDtypes, type Tensors } from './support/golden-tensors';
import { pythonJson, rejectionOf, seededRandom } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'pretrained');
const base = path.join(fixtures, 'qwen2');
const peftAdapter = path.join(fixtures, 'qwen2-peft-adapter');
const lora = { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] };

const adaptedTrainer = async (source = base, options: FromPretrainedOptions = {}) =>
  new Trainer({
    model: await fromPretrained(source, options),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-2 },
    lora,
    config: { progressBar: false, numThreads: 1, seed: 0, batchSize: 2, shuffle: false },
  });

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;

describe("LoRA adapters in PEFT's files, on a Hugging Face checkpoint", function () {
  this.timeout(120_000);
  let golden: Tensors;
  let folder: string;
  before(async () => {
    ({ tensors: golden } = await loadSafetensors(path.join(fixtures, 'qwen2-peft-adapter.golden.safetensors')));
  });
  beforeEach(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-peft-'));
  });
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  it("loads an adapter PEFT saved and computes PeftModel's logits, adapted and merged", async () => {
    const trainer = await adaptedTrainer();
    const ids = golden.input_ids;
    const unadapted = await trainer.predict(ids.data, ids.shape);
    await trainer.loadAdapter(peftAdapter);
    const adapted = await trainer.predict(ids.data, ids.shape);
    expectClose(adapted, golden.logits, 'logits with the adapter');
    // init_lora_weights=False: the adapter does change the logits, so the check above has teeth.
    expect(Math.max(...Array.from(adapted.data, (value, i) => Math.abs(value - unadapted.data[i])))).to.be.above(0.01);
    await trainer.mergeAdapter();
    expectClose(await trainer.predict(ids.data, ids.shape), golden.logits, 'logits with the adapter merged');
  });

  it('writes back what PEFT wrote: the same tensors under the same names, and the same LoraConfig', async () => {
    const trainer = await adaptedTrainer();
    await trainer.loadAdapter(peftAdapter);
    await trainer.saveAdapter(folder);
    const weights = 'adapter_model.safetensors';
    const [ours, peft] = await Promise.all([
      loadSafetensors(path.join(folder, weights)),
      loadSafetensors(path.join(peftAdapter, weights)),
    ]);
    expect(Object.keys(ours.tensors).sort()).to.deep.equal(Object.keys(peft.tensors).sort());
    for (const [name, tensor] of Object.entries(peft.tensors)) {
      expect(ours.tensors[name].shape, name).to.deep.equal(tensor.shape);
      expect(ours.tensors[name].data, name).to.deep.equal(tensor.data); // the same typed array: the same dtype
    }
    const [ourConfig, peftConfig] = [
      readJson(path.join(folder, 'adapter_config.json')),
      readJson(path.join(peftAdapter, 'adapter_config.json')),
    ];
    // PEFT's fixture was made from a model in memory, with no task type; ours names its checkpoint and task.
    const named = ['init_lora_weights', 'base_model_name_or_path', 'task_type'];
    for (const key of Object.keys(ourConfig)) {
      if (named.includes(key)) continue; // init_lora_weights: how the adapters began, PEFT's at random
      const sorted = (value: unknown) => (Array.isArray(value) ? [...value].sort() : value);
      expect(sorted(ourConfig[key]), key).to.deep.equal(sorted(peftConfig[key]));
    }
    expect(ourConfig.base_model_name_or_path).to.equal(path.resolve(base));
    expect(ourConfig.task_type).to.equal('CAUSAL_LM');
  });

  it("loads an adapter folder alone with the base model it names, as AutoPeftModelForCausalLM, to PeftModel's logits", async () => {
    const trainer = await adaptedTrainer();
    await trainer.loadAdapter(peftAdapter);
    await trainer.saveAdapter(folder);
    const model = await loadPretrainedModel(folder, { numThreads: 1 });
    const ids = golden.input_ids;
    expectClose(await model.predict(ids.data, ids.shape), golden.logits, 'logits of the adapter folder alone');
    const given = await loadPretrainedModel(base, { adapter: peftAdapter, numThreads: 1 });
    expectClose(await given.predict(ids.data, ids.shape), golden.logits, 'logits of the base with the adapter');
    const named = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-peft-nameless-'));
    fs.copyFileSync(path.join(peftAdapter, 'adapter_config.json'), path.join(named, 'adapter_config.json'));
    const nameless = await rejectionOf(loadPretrainedModel(named));
    fs.rmSync(named, { recursive: true, force: true });
    expect(nameless.message).to.contain('names no base_model_name_or_path');
  });

  it("keeps the adapters of a bfloat16 checkpoint in float32, as PEFT's autocast_adapter_dtype, to PeftModel's logits", async () => {
    const bf16 = path.join(fixtures, 'llama-bf16');
    const { tensors, metadata } = await loadSafetensors(`${bf16}-peft-adapter.golden.safetensors`);
    expect(metadata.baseDtype).to.equal('torch.bfloat16');
    const trainer = await adaptedTrainer(bf16, { dtype: 'auto' });
    await trainer.loadAdapter(`${bf16}-peft-adapter`);
    const logits = await trainer.predict(tensors.input_ids.data, tensors.input_ids.shape);
    // transformers' own eager and sdpa attention round this far apart here (the fixture measures it).
    expectClose(logits, tensors.logits, 'bfloat16 logits with float32 adapters', {
      tolerance: Number(metadata.eagerSdpaSpread),
      absolute: true,
    });
    // They train: the gradient flows through the casts, into float32 adapters.
    const random = seededRandom(5);
    const history = await trainer.fit(
      Dataset.fromTokens(
        Array.from({ length: 40 }, () => Math.floor(random() * 64)),
        { contextLength: 8 },
      ),
      { numEpochs: 2 },
    );
    expect(history.epochs[1].loss).to.be.below(history.epochs[0].loss);
    await trainer.saveAdapter(folder);
    const dtypes = new Set(Object.values(safetensorsDtypes(path.join(folder, 'adapter_model.safetensors'))));
    expect([...dtypes]).to.deep.equal(['F32']);
    expect(safetensorsDtypes(path.join(`${bf16}-peft-adapter`, 'adapter_model.safetensors'))).to.deep.equal(
      safetensorsDtypes(path.join(folder, 'adapter_model.safetensors')),
    );
    const saved = await loadSafetensors(path.join(folder, 'adapter_model.safetensors'));
    const loaded = await loadSafetensors(path.join(`${bf16}-peft-adapter`, 'adapter_model.safetensors'));
    const moved = Object.keys(loaded.tensors).filter((name) =>
      Array.from(saved.tensors[name].data as Float32Array).some((value, i) => value !== loaded.tensors[name].data[i]),
    );
    expect(moved).to.have.length(Object.keys(loaded.tensors).length);
  });

  it("scales rank-stabilized adapters by alpha / sqrt(r) (PEFT's use_rslora), kept in the adapter's config", async () => {
    // PEFT's adapter at r 4, alpha 8 scales by 2; rank-stabilized at alpha 4 scales by 4 / sqrt(4) = 2 too.
    const stabilized = path.join(folder, 'rslora');
    fs.mkdirSync(stabilized);
    fs.copyFileSync(
      path.join(peftAdapter, 'adapter_model.safetensors'),
      path.join(stabilized, 'adapter_model.safetensors'),
    );
    const config = readJson(path.join(peftAdapter, 'adapter_config.json'));
    fs.writeFileSync(
      path.join(stabilized, 'adapter_config.json'),
      JSON.stringify({ ...config, lora_alpha: 4, use_rslora: true }),
    );
    const trainer = new Trainer({
      model: await fromPretrained(base),
      lora: { ...lora, alpha: 4, useRslora: true },
      config: { progressBar: false, numThreads: 1 },
    });
    await trainer.loadAdapter(stabilized);
    const ids = golden.input_ids;
    expectClose(await trainer.predict(ids.data, ids.shape), golden.logits, 'logits with rank-stabilized scaling');
    await trainer.saveAdapter(path.join(folder, 'saved'));
    expect(readJson(path.join(folder, 'saved', 'adapter_config.json'))).to.deep.include({
      use_rslora: true,
      lora_alpha: 4,
    });
    // A trainer without useRslora refuses the rank-stabilized adapter, naming the field.
    const plain = new Trainer({
      model: await fromPretrained(base),
      lora: { ...lora, alpha: 4 },
      config: { progressBar: false },
    });
    expect((await rejectionOf(plain.loadAdapter(stabilized))).message).to.contain('has use_rslora true');
  });

  it("adapts every linear layer but the output layer with targetModules 'all-linear', as PEFT, and names them in the saved config", async () => {
    const trainer = new Trainer({
      model: await fromPretrained(base),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      lora: { targetModules: 'all-linear' },
      config: { progressBar: false, numThreads: 1 },
    });
    await trainer.setup();
    const adapted = trainer.model.namedParameters
      .filter(({ name }) => name.endsWith('.lora_A.weight'))
      .map(({ name }) => name.slice(0, -'.lora_A.weight'.length));
    const projections = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];
    const layers = (readJson(path.join(base, 'config.json')).num_hidden_layers as number) ?? 0;
    expect(adapted).to.have.length(layers * projections.length);
    for (const name of adapted)
      expect(
        projections.some((projection) => name.endsWith(`.${projection}`)),
        name,
      ).to.equal(true);
    await trainer.saveAdapter(folder);
    expect([...(readJson(path.join(folder, 'adapter_config.json')).target_modules as string[])].sort()).to.deep.equal(
      [...adapted].sort(),
    );
  });

  it("loads the embedding layers PEFT's save_embedding_layers wrote beside the adapters", async () => {
    const { tensors } = await loadSafetensors(path.join(peftAdapter, 'adapter_model.safetensors'));
    const plain = await loadPretrainedModel(base, { numThreads: 1 });
    const embedding = (await plain.stateDict())['model.embed_tokens.weight'];
    const changed = {
      data: Float32Array.from(embedding.data as Float32Array, (value) => value * 2),
      shape: embedding.shape,
    };
    fs.copyFileSync(path.join(peftAdapter, 'adapter_config.json'), path.join(folder, 'adapter_config.json'));
    await saveSafetensors(path.join(folder, 'adapter_model.safetensors'), {
      ...tensors,
      'base_model.model.model.embed_tokens.weight': changed,
    });
    const model = await loadPretrainedModel(base, { adapter: folder, numThreads: 1 });
    expect((await model.stateDict())['model.embed_tokens.weight'].data).to.deep.equal(changed.data);
  });

  it("computes PEFT's DoRA (use_dora): PeftModel's logits adapted and merged, trains the magnitudes, and writes them back", async () => {
    const doraAdapter = path.join(fixtures, 'qwen2-dora-adapter');
    const { tensors: dora } = await loadSafetensors(path.join(fixtures, 'qwen2-dora-adapter.golden.safetensors'));
    const trainer = new Trainer({
      model: await fromPretrained(base),
      loss: 'cross_entropy',
      optimizer: { name: 'adamw', lr: 1e-2 },
      lora: { ...lora, useDora: true },
      config: { progressBar: false, numThreads: 1, seed: 0, batchSize: 2, shuffle: false },
    });
    await trainer.setup();
    const ids = dora.input_ids;
    // Before loading, B is zero and each magnitude is its row's norm: the model is the base model.
    const plain = await (await adaptedTrainer()).predict(ids.data, ids.shape);
    expectClose(await trainer.predict(ids.data, ids.shape), plain, 'a fresh DoRA adapter changes nothing');
    await trainer.loadAdapter(doraAdapter);
    expectClose(await trainer.predict(ids.data, ids.shape), dora.logits, 'logits with the DoRA adapter');
    await trainer.saveAdapter(folder);
    const [ours, peft] = await Promise.all([
      loadSafetensors(path.join(folder, 'adapter_model.safetensors')),
      loadSafetensors(path.join(doraAdapter, 'adapter_model.safetensors')),
    ]);
    expect(Object.keys(ours.tensors).sort()).to.deep.equal(Object.keys(peft.tensors).sort());
    expect(readJson(path.join(folder, 'adapter_config.json')).use_dora).to.equal(true);
    const magnitude = 'model.layers.0.self_attn.q_proj.lora_magnitude_vector.weight';
    expect(trainer.model.namedParameters.find(({ name }) => name === magnitude)?.requiresGrad).to.equal(true);
    const before = (await trainer.stateDict())[magnitude].data;
    await trainer.fit(Dataset.fromTokens(Array.from(ids.data, Number), { contextLength: 4 }), { numEpochs: 1 });
    expect((await trainer.stateDict())[magnitude].data).to.not.deep.equal(before);
    const merged = new Trainer({
      model: await fromPretrained(base),
      lora: { ...lora, useDora: true },
      config: { progressBar: false, numThreads: 1 },
    });
    await merged.loadAdapter(doraAdapter);
    await merged.mergeAdapter();
    expectClose(await merged.predict(ids.data, ids.shape), dora.merged, 'logits with the DoRA adapter merged');
    const plainTrainer = await adaptedTrainer();
    expect((await rejectionOf(plainTrainer.loadAdapter(doraAdapter))).message).to.contain('has use_dora true');
  });

  it('refuses an adapter whose LoraConfig computes what firebrand does not, naming the field', async () => {
    for (const [key, value, said] of [
      ['rank_pattern', { q_proj: 8 }, 'rank_pattern'],
      ['alpha_pattern', { v_proj: 16 }, 'alpha_pattern'],
      ['bias', 'all', 'bias'],
      ['lora_bias', true, 'lora_bias'],
    ] as const) {
      const changed = path.join(folder, key);
      fs.mkdirSync(changed);
      fs.copyFileSync(
        path.join(peftAdapter, 'adapter_model.safetensors'),
        path.join(changed, 'adapter_model.safetensors'),
      );
      const config = { ...readJson(path.join(peftAdapter, 'adapter_config.json')), [key]: value };
      fs.writeFileSync(path.join(changed, 'adapter_config.json'), JSON.stringify(config));
      const error = await rejectionOf((await adaptedTrainer()).loadAdapter(changed));
      expect(error.code, key).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(error.message, key).to.contain(key).and.contain(said).and.contain(changed);
    }
  });

  it("is loaded by PEFT's PeftModel to firebrand's logits, after training (where peft is importable)", async function () {
    const trainer = await adaptedTrainer();
    const random = seededRandom(3);
    const tokens = Array.from({ length: 120 }, () => Math.floor(random() * 64));
    await trainer.fit(Dataset.fromTokens(tokens, { contextLength: 8 }), { numEpochs: 1 });
    await trainer.saveAdapter(folder);
    const ids = golden.input_ids;
    const ours = await trainer.predict(ids.data, ids.shape);
    const script = `import json, sys
try:
    import peft, torch, transformers
except ImportError as error:
    print(json.dumps({'missing': str(error)})); sys.exit(0)
model = transformers.AutoModelForCausalLM.from_pretrained(sys.argv[1])
model = peft.PeftModel.from_pretrained(model, sys.argv[2]).eval()
with torch.no_grad():
    logits = model(input_ids=torch.tensor(json.loads(sys.argv[3]))).logits.transpose(1, 2)
print(json.dumps({'logits': logits.flatten().tolist()}))`;
    const rows = [Array.from(ids.data.slice(0, 8), Number), Array.from(ids.data.slice(8), Number)];
    const python = pythonJson(this, script, base, folder, JSON.stringify(rows)) as {
      logits?: number[];
      missing?: string;
    };
    if (python.missing !== undefined) {
      console.log(
        `      skipped: ${python.missing} (Debian packages no peft: put the src/ of github.com/huggingface/peft on PYTHONPATH)`,
      );
      this.skip();
    }
    expectClose(ours, { data: Float32Array.from(python.logits as number[]), shape: ours.shape }, "PeftModel's logits");
  });

  it('warns of an adapter on a head tied to the embeddings, and refuses to merge it, changing nothing', async () => {
    const tiedChat = path.join(__dirname, '..', '..', 'examples', 'data', 'tiny-chat-llama');
    const warnings: Error[] = [];
    const listener = (warning: Error) => warnings.push(warning);
    process.on('warning', listener);
    const trainer = new Trainer({
      model: await fromPretrained(tiedChat),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      lora: { r: 4, targetModules: ['q_proj', 'lm_head'] },
      config: { progressBar: false, numThreads: 1, seed: 0 },
    });
    try {
      await trainer.setup();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    const tied = warnings.filter((warning) => (warning as { code?: string }).code === 'FIREBRAND_LORA_TIED_WEIGHT');
    expect(tied).to.have.length(1);
    expect(tied[0].message).to.contain("'lm_head'").and.contain("'model.embed_tokens.weight'");
    const before = await trainer.stateDict();
    const error = await rejectionOf(trainer.mergeAdapter());
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_STATE');
    expect(error.message).to.match(/'lm_head' has an adapter, and its weight is tied to 'model\.embed_tokens\.weight'/);
    // Nothing merged, the other adapters neither: the adapters are still there, the weights unchanged.
    const after = await trainer.stateDict();
    expect(Object.keys(after)).to.deep.equal(Object.keys(before));
    for (const [name, tensor] of Object.entries(before)) expect(after[name].data, name).to.deep.equal(tensor.data);
  });
});
