// Fine-tuning a pretrained Llama with LoRA, as PEFT does: the checkpoint and its own tokenizer come
// from a Hugging Face folder (a tiny random one made by scripts/make-pretrained-fixtures.py, or yours:
// a folder or a hub id as the first argument); each line of a text file, "question<TAB>answer", becomes
// a conversation in the checkpoint's chat template; adapters on every attention and MLP projection (as
// PEFT's "all-linear") train while the weights stay frozen; then the model answers a question, and
// the adapters are saved in PEFT's layout. The tiny checkpoint's weights are random: on it the loss falls
// but the answers stay noise; on a real checkpoint the same code fine-tunes it.
//   npm run build:ts && node dist/examples/finetune-llama.js [folder or org/name] [text file]
//   (EXAMPLE_EPOCHS, default 100)
// In your project, import from 'firebrand' instead of '../src'.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, fromPretrained, HuggingFaceTokenizer, Trainer } from '../src';
import { exampleSize } from './shared/example-size';

const root = path.join(__dirname, '..', '..');

async function main(): Promise<void> {
  const source = process.argv[2] ?? path.join(root, 'examples', 'data', 'tiny-chat-llama');
  const textFile = process.argv[3] ?? path.join(root, 'examples', 'data', 'fox-chat.txt');
  const tokenizer = await HuggingFaceTokenizer.fromPretrained(source);
  const eos = tokenizer.specialTokenId('eos');

  // One conversation per line, in the checkpoint's chat template; the windows never span two.
  const pairs = fs
    .readFileSync(textFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('\t'))
    .map((line) => line.split('\t') as [string, string]);
  const conversations = pairs.map(([question, answer]) =>
    tokenizer.applyChatTemplate([
      { role: 'user', content: question },
      { role: 'assistant', content: answer },
    ]),
  );
  const data = Dataset.fromTokens(conversations, { contextLength: 32, stride: 8 });

  const trainer = new Trainer({
    model: await fromPretrained(source),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-2 },
    lora: {
      r: 8,
      alpha: 16,
      targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    },
    config: { batchSize: 8, numEpochs: exampleSize('EXAMPLE_EPOCHS', 100), progressBar: false, seed: 0 },
  });
  const history = await trainer.fit(data);
  const losses = history.epochs.map((epoch) => epoch.loss);
  console.log(`loss ${losses[0].toFixed(3)} -> ${(losses.at(-1) as number).toFixed(3)} over ${losses.length} epochs`);

  const [question] = pairs[0];
  const prompt = tokenizer.applyChatTemplate([{ role: 'user', content: question }], { addGenerationPrompt: true });
  const answer: number[] = [];
  const stopTokens = eos === undefined ? [] : [eos];
  for await (const token of trainer.generate(prompt, { maxNewTokens: 24, greedy: true, stopTokens }))
    answer.push(token);
  console.log(`${question} -> ${JSON.stringify(tokenizer.decode(answer, { skipSpecialTokens: true }))}`);

  const adapters = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-llama-lora-'));
  await trainer.saveAdapter(adapters);
  console.log(`adapters (PEFT's layout) in ${adapters}: ${fs.readdirSync(adapters).sort().join(', ')}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
