// The examples/ folder runs as documented (short runs, from the repository root).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { pythonJson } from './support/helpers';

const root = path.join(__dirname, '..', '..');
const compiled = path.join(__dirname, '..', 'examples');

/** Runs an example sized by the environment (EXAMPLE_EPOCHS, EXAMPLE_TRAIN_SAMPLES), as the demo is. */
function runExample(
  name: string,
  size: { epochs: number; trainSamples?: number },
  args: string[] = [],
  extraEnv: Record<string, string> = {},
): string {
  const env = {
    ...process.env,
    ...extraEnv,
    EXAMPLE_EPOCHS: String(size.epochs),
    ...(size.trainSamples ? { EXAMPLE_TRAIN_SAMPLES: String(size.trainSamples) } : {}),
  };
  const result = spawnSync(process.execPath, [path.join(compiled, `${name}.js`), ...args], {
    cwd: root,
    encoding: 'utf8',
    env,
  });
  expect(result.status, `${name}: ${result.stderr}`).to.equal(0);
  return result.stdout;
}

/**
 * torchvision's own state dict of a ResNet-18 (its initialization: the examples cannot download weights),
 * written in `folder` by python3's torchvision; undefined, saying why, where python3 has none.
 */
function torchvisionResnet18(test: Mocha.Context, folder: string): string | undefined {
  const weights = path.join(folder, 'resnet18.pth');
  const made = pythonJson(
    test,
    `import json, sys
try:
    import torch, torchvision
except ImportError as error:
    print(json.dumps({'missing': str(error)})); sys.exit(0)
torch.manual_seed(0)
torch.save(torchvision.models.resnet18().state_dict(), sys.argv[1])
print(json.dumps({}))`,
    weights,
  ) as { missing?: string };
  if (made.missing === undefined) return weights;
  console.log(`      (no torchvision in python3: ${made.missing}; the example runs from its own initialization)`);
  return undefined;
}

describe('examples', function () {
  // A safety net, not a verdict: each example is sized by the environment to take seconds on an idle
  // machine, and may take many times that on a busy one.
  this.timeout(900_000);
  it('finetune-llama trains LoRA adapters on a chat text file, answers in the chat template and saves PEFT adapters', () => {
    const output = runExample('finetune-llama', { epochs: 10 });
    const [, first, last] = /loss (\d+\.\d+) -> (\d+\.\d+) over 10 epochs/.exec(output) ?? [];
    expect(Number(last), output).to.be.below(Number(first));
    expect(output).to.match(/What does the fox do\? -> ".*"/);
    expect(output).to.contain('adapter_config.json, adapter_model.safetensors');
  });

  it('sft-chat fine-tunes LoRA on JSONL conversations with assistant-only loss, then serves the adapter folder', () => {
    const output = runExample('sft-chat', { epochs: 8 });
    const [, first, last] = /loss (\d+\.\d+) -> (\d+\.\d+) over 8 epochs/.exec(output) ?? [];
    expect(Number(last), output).to.be.below(Number(first));
    expect(output).to.match(/served at http:\/\/127\.0\.0\.1:\d+\/v1: ".*"/);
  });

  it('subclass-torchscript fits the sine with its own training_step', () => {
    const output = runExample('subclass-torchscript', { epochs: 8 });
    const mse = Number(/best validation mse (\d+\.\d+)/.exec(output)?.[1]);
    expect(mse).to.be.below(0.1);
  });

  it('tabular-http trains on a raw CSV file and serves JSON records over HTTP, missing fields and all', () => {
    const output = runExample('tabular-http', { epochs: 20 });
    expect(Number(/validation accuracy (\d\.\d+)/.exec(output)?.[1]), output).to.be.above(0.7);
    const reply = /-> 200 (\[.*\])$/m.exec(output)?.[1];
    const answers = JSON.parse(reply ?? 'null') as { label: string; probability: number }[];
    expect(answers.map((answer) => answer.label)).to.deep.equal(['yes', 'no']);
    for (const { probability } of answers) expect(probability).to.be.within(0.5, 1);
  });

  it('csv-regression predicts house prices (r2 > 0.9)', () => {
    const output = runExample('csv-regression', { epochs: 30 });
    expect(Number(/r2 (\d\.\d+)/.exec(output)?.[1])).to.be.above(0.9);
  });

  it('csv-regression.run.json trains through the command line', () => {
    const result = spawnSync(
      process.execPath,
      [
        path.join(__dirname, '..', 'src', 'cli', 'main.js'),
        'train',
        'examples/csv-regression.run.json',
        '--set',
        'numEpochs=5',
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(result.status, result.stderr).to.equal(0);
    expect(JSON.parse(result.stdout.trim().split('\n').at(-1) as string)).to.include({ epochs: 5 });
  });

  it('early-stopping stops, keeps the best checkpoints and restores the best weights', () => {
    const output = runExample('early-stopping', { epochs: 200 });
    expect(output).to.match(
      /stopped after \d+ epochs \(best epoch \d+\); best checkpoint .*epoch=\d+-acc=0\.\d{3} with validation accuracy 0\.9\d\d/,
    );
    expect(output).to.match(/best checkpoint loads with 4482 parameters/);
  });

  it('char-gpt trains a character-level GPT on the training guide and samples it', () => {
    const output = runExample('char-gpt', { epochs: 3 }, ['docs/guides/training.md']);
    const [, loss, uniform] = /validation loss (\d\.\d+) \(uniform guessing: (\d\.\d+)\)/.exec(output) ?? [];
    expect(Number(loss)).to.be.below(0.7 * Number(uniform));
    expect(output).to.match(/sample \(\d+ tokens\/s\):\nThe .{200}/s);
  });

  it('lstm-classifier learns which letter variable-length sequences hold most (validation accuracy > 0.9)', () => {
    const output = runExample('lstm-classifier', { epochs: 4 });
    // Its generator once repeated after ~10k draws: 763 distinct training sequences, 73 validation ones seen in training.
    expect(output).to.match(/3000 of 3000 training sequences distinct; [0-4] of 500 validation sequences also train/);
    expect(Number(/validation accuracy (\d\.\d+)/.exec(output)?.[1])).to.be.above(0.9);
  });

  it('lora-gpt adapts a pretrained GPT-mini to another text with LoRA, saves the adapter alone and merges it', () => {
    const output = runExample('lora-gpt', { epochs: 2 });
    const before = Number(/validation loss (\d\.\d+)\n/.exec(output)?.[1]);
    const after = Number(/after LoRA: validation loss (\d\.\d+)/.exec(output)?.[1]);
    expect(after, output).to.be.below(before);
    expect(output).to.match(/LoRA adapters: 12 tensors, 11264 of \d+ parameters train/);
    expect(output).to.contain('adapter: adapter_config.json, adapter_model.safetensors');
  });

  function needFashionMnist(context: Mocha.Context): void {
    const dataDir = process.env.FASHION_MNIST_DIR ?? '/usr/share/datasets/fashion-mnist';
    if (!fs.existsSync(path.join(dataDir, 'train-images-idx3-ubyte.gz'))) {
      console.log(`      skipped: Fashion-MNIST is not in ${dataDir} (apt-get install dataset-fashion-mnist)`);
      context.skip();
    }
  }

  it('fashion-mnist trains one epoch of the MLP past 80% test accuracy', function () {
    needFashionMnist(this);
    const output = runExample('fashion-mnist', { epochs: 1 });
    expect(Number(/test accuracy (\d\.\d+)/.exec(output)?.[1])).to.be.above(0.8);
  });

  it('finetune-resnet trains the head of a PyTorch-scripted ResNet-18, its backbone bit-identical, then unfreezes layer4', function () {
    needFashionMnist(this);
    const output = runExample('finetune-resnet', { epochs: 3, trainSamples: 6000 });
    expect(output).to.contain('unfrozen: 15 parameters of layer4');
    expect(output).to.contain('layers 1-3 and the stem (90 parameters and buffers) unchanged: true');
    expect(output).to.contain('learning rates: adamw/pg0 0.01, adamw/pg1 0.0001');
    expect(Number(/test accuracy (\d\.\d+)/.exec(output)?.[1])).to.be.above(0.5);
  });

  it("finetune-torchvision trains torchvision's ResNet-18 from its .pth with the head swapped", function () {
    needFashionMnist(this);
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-torchvision-example-'));
    try {
      const weights = torchvisionResnet18(this, folder);
      const args = weights === undefined ? [] : [weights];
      const output = runExample('finetune-torchvision', { epochs: 1, trainSamples: 3000 }, args);
      expect(output).to.contain(args.length > 0 ? `weights from ${weights}` : "torchvision's initialization");
      expect(Number(/test accuracy (\d\.\d+)/.exec(output)?.[1]), output).to.be.above(0.5);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("image-folder-resnet fine-tunes torchvision's ResNet-18 on a folder of PNGs and serves the saved model on a file", function () {
    needFashionMnist(this);
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-image-folder-example-'));
    try {
      const weights = torchvisionResnet18(this, folder);
      const env: Record<string, string> = weights === undefined ? {} : { TORCHVISION_WEIGHTS: weights };
      const output = runExample('image-folder-resnet', { epochs: 1, trainSamples: 600 }, [], env);
      expect(output).to.contain(weights === undefined ? "torchvision's initialization" : `weights from ${weights}`);
      expect(output).to.contain('600 training and 150 validation images of 10 classes');
      expect(Number(/validation accuracy (\d\.\d+)/.exec(output)?.[1]), output).to.be.above(0.2);
      expect(output).to.match(/\d+\.png \(a [a-z-]+\) -> [a-z-]+/);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('resnet-fashion-mnist trains the TypeScript ResNet-18 for 2 epochs of 3,000 images past 75% test accuracy', function () {
    needFashionMnist(this);
    const output = runExample('resnet-fashion-mnist', { epochs: 2, trainSamples: 3000 });
    expect(output).to.contain('Total params: 701,178');
    expect(Number(/test accuracy (\d\.\d+)/.exec(output)?.[1])).to.be.above(0.75);
  });
});
