// LoRA fine-tuning: a character-level GPT-mini (examples/models/gpt.ts) trained
// on one text (the training guide), then adapted to another (firebrand's trainer source)
// with LoRA adapters on its attention and MLP projections while its own weights
// stay frozen; the adapters are saved alone in PEFT's layout, then merged for export.
//   npm run build:ts && node dist/examples/lora-gpt.js   (EXAMPLE_EPOCHS for each part, default 3)
// In your project, import from 'firebrand' instead of '../src'.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { CharTokenizer, Dataset, Trainer } from '../src';
import { exampleSize } from './shared/example-size';
import { GPTMini } from './models/gpt';

const context = 64;
const gpt = (vocab: number) => new GPTMini({ vocab, context, dim: 64, heads: 4, layers: 2 });

async function main(): Promise<void> {
  // Pretraining and the LoRA fine-tuning each run this many epochs.
  const [baseEpochs, loraEpochs] = [exampleSize('EXAMPLE_EPOCHS', 3), exampleSize('EXAMPLE_EPOCHS', 3)];
  const base = fs.readFileSync(path.join('docs', 'guides', 'training.md'), 'utf8');
  const target = fs.readFileSync(path.join('src', 'training', 'trainer.ts'), 'utf8');
  const tokenizer = CharTokenizer.fromText(base + target);
  const windows = (text: string, stride: number) =>
    Dataset.fromTokens(tokenizer.encode(text), { contextLength: context, stride });
  const split = Math.floor(target.length * 0.9);
  const [targetTrain, targetValid] = [
    windows(target.slice(0, split), context / 2),
    windows(target.slice(split), context),
  ];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-lora-gpt-'));

  const pretraining = new Trainer({
    model: gpt(tokenizer.vocabSize),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 3e-3 },
    config: { numEpochs: baseEpochs, batchSize: 32, progressBar: false, maxGradNorm: 1 },
  });
  await pretraining.fit(windows(base, context / 2));
  await pretraining.save(path.join(work, 'base'));
  console.log(
    `base model on ${target.length} characters of code: validation loss ${(await pretraining.evaluate(targetValid)).loss.toFixed(3)}`,
  );

  const tuning = new Trainer({
    model: gpt(tokenizer.vocabSize),
    lora: { r: 8, alpha: 16, targetModules: ['c_attn', 'c_proj'] },
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 3e-3 },
    config: { numEpochs: loraEpochs, batchSize: 32, progressBar: false },
  });
  // The base weights, by name (strictly: a base checkpoint has no adapters, which keep their PEFT initialisation).
  await tuning.initWeightsFrom(path.join(work, 'base', 'model.safetensors'));
  const adapters = Object.entries(await tuning.stateDict()).filter(([name]) => name.includes('.lora_'));
  const adapterSize = adapters.reduce((sum, [, tensor]) => sum + tensor.data.length, 0);
  console.log(`LoRA adapters: ${adapters.length} tensors, ${adapterSize} of ${tuning.parameterCount} parameters train`);
  const history = await tuning.fit(targetTrain, { evalData: targetValid });
  console.log(`after LoRA: validation loss ${history.epochs[history.epochs.length - 1].valLoss?.toFixed(3)}`);

  await tuning.saveAdapter(path.join(work, 'adapter'));
  console.log(`adapter: ${fs.readdirSync(path.join(work, 'adapter')).join(', ')}`);
  await tuning.mergeAdapter();
  let sample = '';
  for await (const id of tuning.generate(tokenizer.encode('  async '), {
    maxNewTokens: 120,
    temperature: 0.8,
    topK: 10,
    seed: 1,
    contextLength: context,
  })) {
    sample += tokenizer.decode([id]);
  }
  console.log(`sample of the merged model:\n  async ${sample}`);
  fs.rmSync(work, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
