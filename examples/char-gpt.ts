// A character-level GPT (examples/models/gpt.ts: nanoGPT's model as TypeScript
// modules) trained on a text file, then sampled; training and sampling run in C++.
//   npm run build:ts && node dist/examples/char-gpt.js [textFile]   (EXAMPLE_EPOCHS, default 3)
// In your project, import from 'firebrand' instead of '../src'.
import fs from 'node:fs';

import { CharTokenizer, Dataset, Trainer } from '../src';
import { exampleSize } from './shared/example-size';
import { GPTMini } from './models/gpt';

async function main(): Promise<void> {
  const file = process.argv[2] ?? 'docs/guides/training.md';
  const epochs = exampleSize('EXAMPLE_EPOCHS', 3);
  const text = fs.readFileSync(file, 'utf8');
  const tokenizer = CharTokenizer.fromText(text);
  const context = 64;
  const ids = tokenizer.encode(text);
  // The first 90% trains, the rest measures; windows overlap by half a context.
  const split = Math.floor(ids.length * 0.9);
  const train = Dataset.fromTokens(ids.subarray(0, split), { contextLength: context, stride: context / 2 });
  const valid = Dataset.fromTokens(ids.subarray(split), { contextLength: context });

  const trainer = new Trainer({
    model: new GPTMini({ vocab: tokenizer.vocabSize, context, dim: 64, heads: 4, layers: 2 }),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 3e-3, weightDecay: 0.01 },
    lrScheduler: { name: 'cosine', warmupSteps: 20 },
    config: { numEpochs: epochs, batchSize: 32, logEvery: 20, maxGradNorm: 1 },
  });
  console.log(
    `${file}: ${ids.length} characters, ${tokenizer.vocabSize} distinct; ${trainer.parameterCount} parameters`,
  );
  const history = await trainer.fit(train, { evalData: valid });
  const last = history.epochs[history.epochs.length - 1];
  console.log(
    `validation loss ${last.valLoss?.toFixed(3)} (uniform guessing: ${Math.log(tokenizer.vocabSize).toFixed(3)})`,
  );

  let sample = '';
  const started = Date.now();
  for await (const id of trainer.generate(tokenizer.encode('The '), {
    maxNewTokens: 200,
    temperature: 0.8,
    topK: 20,
    seed: 1,
    contextLength: context,
  })) {
    sample += tokenizer.decode([id]);
  }
  console.log(`sample (${(200 / ((Date.now() - started) / 1000)).toFixed(0)} tokens/s):\nThe ${sample}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
