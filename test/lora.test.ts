// LoRA adapters beyond their golden parity (modules-golden.test.ts, lora-gpt):
// saved alone in PEFT's layout and loaded back, merged into the weights for
// save and TorchScript export, and errors that name the target, the layer, the
// file or the field at fault.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, loadSafetensors, LoraConfig, Module, nn, Trainer } from '../src';
import { errorOf, rejectionOf } from './support/helpers';
import { GPTMini } from '../examples/models/gpt';
import { ResNet18 } from '../examples/models/resnet';
import { expectClose } from './support/expect-close';

const lora: LoraConfig = { r: 4, alpha: 8, targetModules: ['c_attn', 'c_proj'] };
const tokens = Dataset.fromTokens(
  Int32Array.from({ length: 200 }, (_, i) => (i * 7) % 16),
  { contextLength: 8 },
);
const prompt = { data: BigInt64Array.from([1n, 5n, 2n, 7n, 3n, 3n, 9n, 0n]), shape: [1, 8] };
const trainerOf = (options: { lora?: LoraConfig; model?: Module } = { lora }) =>
  new Trainer({
    model: options.model ?? new GPTMini(),
    lora: options.lora,
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-2 },
    config: { progressBar: false, numThreads: 1, seed: 3, batchSize: 8, numEpochs: 2 },
  });

describe('LoRA adapters', function () {
  this.timeout(120_000);
  let folder: string;
  beforeEach(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-lora-'));
  });
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  it("saves a module unfrozen beside the adapters whole, as PEFT's modules_to_save, and loads it back", async () => {
    const trainer = trainerOf();
    await trainer.setup();
    expect(await trainer.unfreeze('transformer.ln_f')).to.deep.equal([
      'transformer.ln_f.weight',
      'transformer.ln_f.bias',
    ]);
    await trainer.fit(tokens);
    await trainer.saveAdapter(folder);
    const config = JSON.parse(fs.readFileSync(path.join(folder, 'adapter_config.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(config.modules_to_save).to.deep.equal(['transformer.ln_f']);
    const { tensors: saved } = await loadSafetensors(path.join(folder, 'adapter_model.safetensors'));
    const trained = await trainer.stateDict();
    expect(saved['base_model.model.transformer.ln_f.weight'].data).to.deep.equal(
      trained['transformer.ln_f.weight'].data,
    );
    expect(saved['base_model.model.transformer.ln_f.bias'].data).to.deep.equal(trained['transformer.ln_f.bias'].data);
    const fresh = trainerOf();
    await fresh.loadAdapter(folder);
    const probe = await trainer.predict(prompt.data, prompt.shape);
    expect((await fresh.predict(prompt.data, prompt.shape)).data).to.deep.equal(probe.data);
  });

  it("trains and saves the modules lora.modulesToSave names whole, as PEFT's modules_to_save", async () => {
    const withHead = { ...lora, modulesToSave: ['ln_f'] };
    const trainer = trainerOf({ lora: withHead });
    await trainer.setup();
    const trained = trainer.model.namedParameters.filter(({ requiresGrad }) => requiresGrad).map(({ name }) => name);
    expect(trained.filter((name) => !name.includes('.lora_'))).to.deep.equal([
      'transformer.ln_f.weight',
      'transformer.ln_f.bias',
    ]);
    const before = (await trainer.stateDict())['transformer.ln_f.weight'].data;
    await trainer.fit(tokens);
    const after = await trainer.stateDict();
    expect(after['transformer.ln_f.weight'].data).to.not.deep.equal(before);
    await trainer.saveAdapter(folder);
    const config = JSON.parse(fs.readFileSync(path.join(folder, 'adapter_config.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(config.modules_to_save).to.deep.equal(['transformer.ln_f']);
    const fresh = trainerOf({ lora: withHead });
    await fresh.loadAdapter(folder);
    const probe = await trainer.predict(prompt.data, prompt.shape);
    expect((await fresh.predict(prompt.data, prompt.shape)).data).to.deep.equal(probe.data);
    const unknown = await rejectionOf(trainerOf({ lora: { ...lora, modulesToSave: ['ln_q'] } }).setup());
    expect(unknown.message).to.contain("lora.modulesToSave: 'ln_q' matches no module with parameters");
  });

  it('resumes DoRA training from a checkpoint to the weights of a run without a stop (its magnitudes kept)', async () => {
    const dora = { ...lora, useDora: true };
    const run = (config: Record<string, unknown>) =>
      new Trainer({
        model: new GPTMini(),
        lora: dora,
        loss: 'cross_entropy',
        optimizer: { name: 'adamw', lr: 1e-2 },
        config: { progressBar: false, numThreads: 1, seed: 3, batchSize: 8, numEpochs: 2, ...config },
      });
    const whole = run({});
    await whole.fit(tokens);
    const outputDir = path.join(folder, 'run');
    await run({ outputDir, numEpochs: 1 }).fit(tokens);
    const resumed = run({ outputDir, resumeFromCheckpoint: true });
    await resumed.fit(tokens);
    const [expected, actual] = [await whole.stateDict(), await resumed.stateDict()];
    const magnitudes = Object.keys(expected).filter((name) => name.endsWith('lora_magnitude_vector.weight'));
    const adapted = Object.keys(expected).filter((name) => name.endsWith('.lora_A.weight'));
    expect(magnitudes).to.have.length(adapted.length).and.not.have.length(0); // one per adapted layer
    for (const name of Object.keys(expected)) expect(actual[name].data, name).to.deep.equal(expected[name].data);
  });

  it('loads its base checkpoint strictly, by initWeightsFrom or config.initWeightsFrom (which lacks the adapters)', async () => {
    const base = trainerOf({});
    await base.fit(tokens);
    await base.save(path.join(folder, 'base'));
    const baseWeights = await base.stateDict();
    const weightsFile = path.join(folder, 'base', 'model.safetensors');
    const adapted = trainerOf();
    expect(await adapted.initWeightsFrom(weightsFile)).to.deep.equal({ missing: [], unexpected: [] });
    const loaded = await adapted.stateDict();
    for (const name of Object.keys(baseWeights)) expect(loaded[name].data, name).to.deep.equal(baseWeights[name].data);
    const configured = new Trainer({
      model: new GPTMini(),
      lora,
      loss: 'cross_entropy',
      optimizer: { name: 'adamw', lr: 1e-2 },
      config: { progressBar: false, numThreads: 1, seed: 3, batchSize: 8, numEpochs: 1, initWeightsFrom: weightsFile },
    });
    await configured.fit(tokens);
    const trained = await configured.stateDict();
    // The base weights came from the file and stayed frozen; only the adapters trained.
    expect(trained['lm_head.weight'].data).to.deep.equal(baseWeights['lm_head.weight'].data);
  });

  it("trains only the adapters, saves them alone in PEFT's layout and loads them back", async () => {
    const trainer = trainerOf();
    await trainer.setup();
    const before = await trainer.stateDict();
    await trainer.fit(tokens);
    const after = await trainer.stateDict();
    const adapters = Object.keys(before).filter((name) => name.includes('.lora_'));
    expect(adapters).to.have.length(2 * 3 * 2); // 2 blocks x (attn.c_attn, attn.c_proj, mlp.c_proj) x (A, B)
    for (const name of Object.keys(before)) {
      const moved = Array.from(before[name].data as Float32Array).some((value, i) => value !== after[name].data[i]);
      expect(moved, name).to.equal(name.includes('.lora_'));
    }

    await trainer.saveAdapter(folder);
    expect(fs.readdirSync(folder).sort()).to.deep.equal(['adapter_config.json', 'adapter_model.safetensors']);
    const config = JSON.parse(fs.readFileSync(path.join(folder, 'adapter_config.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(config).to.include({ peft_type: 'LORA', r: 4, lora_alpha: 8, lora_dropout: 0, bias: 'none' });
    // PEFT's LoraConfig fields only: older PEFT raises on a key it lacks (a 'library' key did).
    const loraConfigFields = [
      'peft_type',
      'task_type',
      'base_model_name_or_path',
      'inference_mode',
      'r',
      'lora_alpha',
      'lora_dropout',
      'target_modules',
      'bias',
      'fan_in_fan_out',
      'init_lora_weights',
      'use_rslora',
      'use_dora',
      'modules_to_save',
    ];
    expect(Object.keys(config).filter((key) => !loraConfigFields.includes(key))).to.deep.equal([]);
    expect(config.target_modules).to.deep.equal(['c_attn', 'c_proj']);
    const saved = await loadSafetensors(path.join(folder, 'adapter_model.safetensors'));
    expect(Object.keys(saved.tensors).sort()).to.deep.equal(adapters.map((name) => `base_model.model.${name}`).sort());

    const fresh = trainerOf();
    const base = await fresh.predict(prompt.data, prompt.shape);
    await fresh.loadAdapter(folder);
    const loaded = await fresh.predict(prompt.data, prompt.shape);
    expectClose(loaded, await trainer.predict(prompt.data, prompt.shape), 'loaded adapters', {
      tolerance: 0,
      absolute: true,
    });
    expect(Array.from(loaded.data).some((value, i) => value !== base.data[i])).to.equal(true);
  });

  it('merges the adapters into the weights for save and TorchScript export, with the same predictions', async () => {
    const trainer = trainerOf();
    await trainer.fit(tokens);
    const adapted = await trainer.predict(prompt.data, prompt.shape);
    const unmerged = await rejectionOf(trainer.exportTorchScript(path.join(folder, 'model.pt')));
    expect(unmerged.message).to.contain(
      'exportTorchScript: the model has LoRA adapters; merge them into the weights first (mergeAdapter)',
    );
    expect((await rejectionOf(trainer.save(path.join(folder, 'saved')))).message).to.contain(
      'merge them first (mergeAdapter) or save them alone (saveAdapter)',
    );

    await trainer.mergeAdapter();
    expectClose(await trainer.predict(prompt.data, prompt.shape), adapted, 'merged', { absolute: true });
    const state = await trainer.stateDict();
    expect(Object.keys(state).filter((name) => name.includes('lora'))).to.deep.equal([]);
    await trainer.exportTorchScript(path.join(folder, 'model.pt'));
    const scripted = new Trainer({
      model: nn.torchScript(path.join(folder, 'model.pt')),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { progressBar: false },
    });
    expectClose(await scripted.predict(prompt.data, prompt.shape), adapted, 'exported', { absolute: true });
    await trainer.save(path.join(folder, 'saved'));
    expect((await rejectionOf(trainer.fit(tokens))).message).to.contain(
      'fit: the LoRA adapters were merged into the weights',
    );
  });

  it("merges conv2d adapters (PEFT's Conv2d) into the kernels with the same predictions", async () => {
    const images = {
      data: Float32Array.from({ length: 8 * 3 * 16 * 16 }, (_, i) => Math.sin(i * 0.7)),
      shape: [8, 3, 16, 16],
    };
    const trainer = new Trainer({
      model: new ResNet18({ width: 8, numClasses: 10 }),
      lora: { r: 2, alpha: 4, targetModules: ['conv1', 'conv2'] },
      loss: 'cross_entropy',
      optimizer: { name: 'adamw', lr: 1e-2 },
      config: { progressBar: false, numThreads: 1, seed: 3, batchSize: 4, numEpochs: 2 },
    });
    await trainer.fit(
      Dataset.fromArrays({
        inputs: images.data,
        inputShape: images.shape,
        targets: Int32Array.from({ length: 8 }, (_, i) => i % 10),
      }),
    );
    const adapted = await trainer.predict(images.data, images.shape);
    await trainer.mergeAdapter();
    expectClose(await trainer.predict(images.data, images.shape), adapted, 'merged', { absolute: true });
    expect(Object.keys(await trainer.stateDict()).filter((name) => name.includes('lora'))).to.deep.equal([]);
  });

  it('names a target that matches nothing, a layer that is not linear, a TorchScript model and bad options', async () => {
    const cases: [LoraConfig, string][] = [
      [
        { targetModules: ['q_proj'] },
        "lora.targetModules: 'q_proj' matches no layer (a layer path equal to it or ending with '.q_proj'); the layers are 'transformer.wte'",
      ],
      [
        { targetModules: ['wte'] },
        "lora: 'transformer.wte' is not a linear or conv2d layer; LoRA adapters go on linear and conv2d layers",
      ],
    ];
    for (const [options, message] of cases) {
      const error = await rejectionOf(trainerOf({ lora: options }).setup());
      expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(error.message).to.contain(message);
    }
    const scripted = new Trainer({
      model: nn.torchScript(path.join(__dirname, '..', '..', 'test', 'fixtures', 'scripted', 'classifier.pt')),
      lora: { targetModules: ['hidden'] },
      loss: 'cross_entropy',
      optimizer: 'adamw',
    });
    expect((await rejectionOf(scripted.setup())).message).to.contain(
      'lora: adapters go on built-in linear and conv2d layers',
    );
    expect(errorOf(() => trainerOf({ lora: { r: 0, targetModules: ['c_attn'] } })).message).to.contain(
      'lora.r: got 0, expected an integer >= 1',
    );
    expect(errorOf(() => trainerOf({ lora: { targetModules: [] } })).message).to.contain(
      'lora.targetModules: name the linear layers to adapt',
    );
    expect((await rejectionOf(trainerOf({}).saveAdapter(folder))).message).to.equal(
      'saveAdapter: the trainer has no LoRA adapters (give it options.lora)',
    );
  });

  it('refuses an adapter for another model or of another rank, naming what differs', async () => {
    const small = trainerOf({ lora: { r: 4, alpha: 8, targetModules: ['c_attn'] } });
    await small.saveAdapter(folder);
    const other = await rejectionOf(trainerOf().loadAdapter(folder));
    expect(other.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(other.message).to.contain('adapter_model.safetensors: the adapter is for another model; missing: ');
    expect(other.message).to.contain('base_model.model.transformer.h.0.attn.c_proj.lora_A.weight');
    const rank = await rejectionOf(trainerOf({ lora: { ...lora, r: 8 } }).loadAdapter(folder));
    expect(rank.message).to.contain("adapter_config.json has r 4, but this trainer's lora has 8");
    const wider = trainerOf({ lora: { r: 4, alpha: 8, targetModules: ['c_attn'] }, model: new GPTMini({ dim: 32 }) });
    const shape = await rejectionOf(wider.loadAdapter(folder));
    expect(shape.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(shape.message).to.contain(
      "adapter weight 'base_model.model.transformer.h.0.attn.c_attn.lora_A.weight' has shape [4, 16] but this model's is [4, 32]",
    );
  });
});
