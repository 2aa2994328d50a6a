// Models written as TypeScript modules against the same models run by PyTorch
// itself (scripts/make-module-fixtures.py): weights drawn from the same seed,
// outputs, gradients, three AdamW steps and BatchNorm buffers, within 1e-5.
// Models whose numbers depend on the version's kernels have a fixture per
// libtorch version (test/fixtures/torch-<version>/modules/), used when present.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  Dataset,
  loadSafetensors,
  LoraConfig,
  Module,
  nn,
  runtimeInfo,
  saveSafetensors,
  TensorData,
  Trainer,
} from '../src';
import { ResNet18 } from '../examples/models/resnet';
import { Functional } from './models/functional';
import { pythonJson } from './support/helpers';
import { AttentionClassifier } from './models/attention';
import { GPTMini } from '../examples/models/gpt';
import { GRURegressor, LSTMClassifier, PackedRecurrent } from './models/recurrent';
import { TiedLM } from './models/tied-lm';
import { TransformerModel } from './models/transformer';
import { UNet } from './models/unet';
import { expectClose } from './support/expect-close';
import { expectStateClose, stepTaken, type Tensors, withPrefix } from './support/golden-tensors';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures');
const running = runtimeInfo().torchVersion.split('.').slice(0, 2).join('.');
function fixtureOf(name: string): string {
  const perVersion = path.join(fixtures, `torch-${running}`, 'modules', `${name}.safetensors`);
  return fs.existsSync(perVersion) ? perVersion : path.join(fixtures, 'modules', `${name}.safetensors`);
}

// Convolution models' steps also depend on the CPU: oneDNN picks its kernels by instruction set, and AVX2
// against AVX-512 moves three AdamW steps by 1e-5. Their references are made live by the fixture script's
// --live mode, with this process's threads and oneDNN settings (ONEDNN_MAX_CPU_ISA included), on the same
// libtorch; without python3-torch, the committed fixture (made on an AVX-512 CPU) stands in.
const LIVE = new Set(['resnet18', 'unet', 'lora-resnet']);
const THREADS = 2;
function liveFixtureOf(name: string, folder: string): string {
  const python = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
  if (spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8' }).status !== 0) {
    console.log(`      ${name}: ${python} has no torch module; the committed (AVX-512) fixture stands in`);
    return fixtureOf(name);
  }
  const script = path.join(__dirname, '..', '..', 'scripts', 'make-module-fixtures.py');
  const result = spawnSync(python, [script, '--live', name, folder, String(THREADS)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`make-module-fixtures.py --live ${name}: ${result.stderr}`);
  return path.join(folder, `${name}.safetensors`);
}

const models = [
  { name: 'resnet18', build: (): Module => new ResNet18({ width: 8, numClasses: 10 }), batchSize: 4 },
  { name: 'unet', build: (): Module => new UNet(3, 2, 8), batchSize: 2 },
  // Weight tying: the state dict holds the tied tensor under both names, as PyTorch's does.
  { name: 'tied-lm', build: (): Module => new TiedLM(), batchSize: 4 },
  // Recurrent layers: PyTorch's parameter names and init, initial and final states, both directions.
  { name: 'lstm-classifier', build: (): Module => new LSTMClassifier(), batchSize: 4 },
  { name: 'gru-regressor', build: (): Module => new GRURegressor(), batchSize: 4 },
  // Lengths: the padding after each sequence is skipped (pack_padded_sequence), both directions.
  { name: 'packed-recurrent', build: (): Module => new PackedRecurrent(), batchSize: 4 },
  // nanoGPT at toy size: causal scaled dot-product attention, learned positions, tied head, nanoGPT's init.
  { name: 'gpt-mini', build: (): Module => new GPTMini(), batchSize: 4 },
  // LoRA (PEFT's layers, by hand in PyTorch) on every c_attn and c_proj, everything else frozen.
  {
    name: 'lora-gpt',
    build: (): Module => new GPTMini(),
    batchSize: 4,
    lora: { r: 4, alpha: 8, targetModules: ['c_attn', 'c_proj'] },
  },
  // LoRA on convolutions (PEFT's Conv2d: A with the kernel, B 1x1) and the head; BatchNorm trains on, as in PEFT.
  {
    name: 'lora-resnet',
    build: (): Module => new ResNet18({ width: 8, numClasses: 10 }),
    batchSize: 4,
    lora: { r: 2, alpha: 4, targetModules: ['conv1', 'conv2', 'fc'] },
  },
  // nn.MultiheadAttention: packed in-projection, key padding and causal masks, batch-first and sequence-first, weights.
  { name: 'attention-classifier', build: (): Module => new AttentionClassifier(), batchSize: 4 },
  // nn.TransformerEncoder (its layers deep copies of one) and a pre-norm TransformerDecoderLayer.
  { name: 'transformer', build: (): Module => new TransformerModel(), batchSize: 4 },
];

for (const { name, build, batchSize, lora } of models as {
  name: string;
  build: () => Module;
  batchSize: number;
  lora?: LoraConfig;
}[]) {
  const quiet = { progressBar: false, numThreads: THREADS, seed: 0, batchSize, shuffle: false } as const;
  describe(`${name} written as TypeScript modules, against PyTorch`, function () {
    this.timeout(60_000);
    let golden: Tensors;
    let metadata: Record<string, string>;
    let folder: string;
    let initialFile: string;
    let data: Dataset;

    before(async () => {
      folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-modules-'));
      const fixture = LIVE.has(name) ? liveFixtureOf(name, folder) : fixtureOf(name);
      const contents = await loadSafetensors(fixture);
      golden = contents.tensors;
      metadata = contents.metadata;
      initialFile = path.join(folder, 'initial.safetensors');
      await saveSafetensors(initialFile, withPrefix(golden, 'initial.'));
      data = await Dataset.fromSafetensors(fixture, { input: 'input', target: 'target' });
    });
    after(() => fs.rmSync(folder, { recursive: true, force: true }));

    it("draws PyTorch's weights from the same seed, with PyTorch's state-dict names", async () => {
      const trainer = new Trainer({ model: build(), lora, loss: 'cross_entropy', optimizer: 'adamw', config: quiet });
      expectStateClose(await trainer.stateDict(), withPrefix(golden, 'initial.'), 'seeded state');
    });

    it('gives the same eval-mode outputs', async () => {
      const trainer = new Trainer({ model: build(), lora, loss: 'cross_entropy', optimizer: 'adamw', config: quiet });
      await trainer.initWeightsFrom(initialFile);
      const input = golden.input;
      expectClose(await trainer.predict(input.data, input.shape), golden.eval_output, 'eval output');
    });

    it('computes the same gradients (one SGD step of lr 1 moves each parameter by its gradient)', async () => {
      const trainer = new Trainer({
        model: build(),
        lora,
        loss: 'cross_entropy',
        optimizer: { name: 'sgd', lr: 1 },
        config: { ...quiet, numEpochs: 1 },
      });
      await trainer.initWeightsFrom(initialFile);
      await trainer.fit(data);
      const after = await trainer.stateDict();
      for (const [parameter, grad] of Object.entries(withPrefix(golden, 'grad.'))) {
        expectClose(stepTaken(golden[`initial.${parameter}`], after[parameter]), grad, `gradient of ${parameter}`);
      }
    });

    it('takes the same three AdamW steps, buffers (BatchNorm running statistics) included', async () => {
      const eps = Number(metadata.adamw_eps ?? 1e-8);
      const trainer = new Trainer({
        model: build(),
        lora,
        loss: 'cross_entropy',
        optimizer: { name: 'adamw', lr: 1e-3, eps },
        config: { ...quiet, numEpochs: 3 },
      });
      await trainer.initWeightsFrom(initialFile);
      const history = await trainer.fit(data);
      const losses = JSON.parse(metadata.adamw3_losses) as number[];
      history.epochs.forEach((epoch, i) => expect(epoch.loss).to.be.closeTo(losses[i], 1e-5 * Math.max(1, losses[i])));
      expectStateClose(await trainer.stateDict(), withPrefix(golden, 'adamw3.'), 'after 3 AdamW steps');
    });
  });
}

describe("F's convolutions, poolings of every dimension, norms and rotary embeddings, against PyTorch", function () {
  this.timeout(60_000);
  let golden: Tensors;
  let names: string[];
  let outputs: Tensors;
  let trainer: Trainer;
  before(async () => {
    const contents = await loadSafetensors(path.join(fixtures, 'modules', 'functional.safetensors'));
    golden = contents.tensors;
    names = JSON.parse(contents.metadata.outputs) as string[];
    trainer = new Trainer({
      model: new Functional(),
      loss: 'mse',
      optimizer: 'sgd',
      config: { progressBar: false, numThreads: 1, seed: 0 },
    });
    outputs = await trainer.predict<Record<string, TensorData>>(golden.input.data, golden.input.shape);
  });

  it('gives the same outputs in C++', () => {
    expect(Object.keys(outputs)).to.deep.equal(names);
    for (const name of names) expectClose(outputs[name], golden[`output.${name}`], name);
  });

  it("exports them as aten calls that Python's torch.jit.load runs to the same outputs", async function () {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-functional-'));
    try {
      await trainer.exportTorchScript(path.join(folder, 'model.pt'));
      const script = `import json, sys, torch
m = torch.jit.load(sys.argv[1] + '/model.pt').eval()
x = torch.tensor(json.loads(sys.argv[2])).reshape(2, 4, 16)
print(json.dumps({name: value.flatten().tolist() for name, value in m(x).items()}))`;
      const exported = pythonJson(
        this,
        script,
        folder,
        JSON.stringify(Array.from(golden.input.data as Float32Array)),
      ) as Record<string, number[]>;
      expect(Object.keys(exported)).to.deep.equal(names);
      for (const name of names) {
        expectClose(
          { shape: golden[`output.${name}`].shape, data: Float64Array.from(exported[name]) },
          golden[`output.${name}`],
          `exported ${name}`,
        );
      }
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("gives PyTorch's own F.rms_norm and nn.RMSNorm (PyTorch 2.4 and later) for F.rmsNorm and nn.rmsNorm", async function () {
    const norm = new Trainer({
      model: nn.sequential(nn.rmsNorm(16)),
      loss: 'mse',
      optimizer: 'sgd',
      config: { progressBar: false, numThreads: 1 },
    });
    const viaModule = await norm.predict(golden.input.data, golden.input.shape);
    const g = (await trainer.stateDict()).g;
    const script = `import json, sys, torch
import torch.nn.functional as F
if not hasattr(F, 'rms_norm'):
    print(json.dumps({'missing': torch.__version__}))
    sys.exit(0)
x = torch.tensor(json.loads(sys.argv[1])).reshape(2, 4, 16)
g = torch.tensor(json.loads(sys.argv[2]))
print(json.dumps({
    'rmsNorm': F.rms_norm(x, [16], g, 1e-6).flatten().tolist(),
    'rmsNormNoWeight': F.rms_norm(x.view(2, 4, 4, 4), [4, 4]).flatten().tolist(),
    'module': torch.nn.RMSNorm(16)(x).flatten().tolist(),
}))`;
    const reference = pythonJson(
      this,
      script,
      JSON.stringify(Array.from(golden.input.data as Float32Array)),
      JSON.stringify(Array.from(g.data as Float32Array)),
    ) as Record<string, number[]> & { missing?: string };
    if (reference.missing !== undefined) {
      console.log(
        `      skipped: PyTorch ${reference.missing} has no F.rms_norm (added in 2.4); the fixture holds its formula`,
      );
      this.skip();
    }
    expectClose(outputs.rmsNorm.data, reference.rmsNorm, 'F.rmsNorm');
    expectClose(outputs.rmsNormNoWeight.data, reference.rmsNormNoWeight, 'F.rmsNorm without a weight');
    expectClose(viaModule.data as Float32Array, reference.module, 'nn.rmsNorm');
  });
});
