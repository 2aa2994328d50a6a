// Chat fine-tuning as TRL's SFTTrainer does it, then served as OpenAI's API: conversations from a JSON
// Lines file of {"messages": [...]}, rendered with the checkpoint's chat template, the loss on the
// assistant's tokens only; LoRA adapters on every linear layer ('all-linear'), two micro-batches per
// step (weighted by counted tokens, as one batch); the adapter saved in PEFT's layout naming its base
// model; then that adapter folder alone loaded (as AutoPeftModelForCausalLM) and served on 127.0.0.1
// for one chat request. The tiny checkpoint's weights are random: on it the loss falls but the answers
// stay noise; give your own checkpoint folder (or hub id) and JSONL file to fine-tune a real one.
//   npm run build:ts && node dist/examples/sft-chat.js [folder or org/name] [file.jsonl]
//   (EXAMPLE_EPOCHS, default 60)
// In your project, import from 'firebrand' instead of '../src'.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, fromPretrained, HuggingFaceTokenizer, loadPretrainedModel, serve, Trainer } from '../src';
import { exampleSize } from './shared/example-size';

const root = path.join(__dirname, '..', '..');

async function main(): Promise<void> {
  const source = process.argv[2] ?? path.join(root, 'examples', 'data', 'tiny-chat-llama');
  const rows = process.argv[3] ?? path.join(root, 'examples', 'data', 'fox-chat.jsonl');
  const tokenizer = await HuggingFaceTokenizer.fromPretrained(source);
  const data = await Dataset.fromSft(rows, tokenizer, { assistantOnlyLoss: true, maxLength: 256 });

  const trainer = new Trainer({
    model: await fromPretrained(source, { attentionMask: true }),
    loss: 'cross_entropy', // PyTorch's ignore_index -100: the targets fromSft leaves out
    optimizer: { name: 'adamw', lr: 1e-2 },
    lora: { r: 8, alpha: 16, targetModules: 'all-linear' },
    config: {
      batchSize: 2,
      gradientAccumulationSteps: 2,
      numEpochs: exampleSize('EXAMPLE_EPOCHS', 60),
      progressBar: false,
      seed: 0,
    },
  });
  const history = await trainer.fit(data);
  const losses = history.epochs.map((epoch) => epoch.loss);
  console.log(`loss ${losses[0].toFixed(3)} -> ${(losses.at(-1) as number).toFixed(3)} over ${losses.length} epochs`);
  const adapter = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-sft-adapter-'));
  await trainer.saveAdapter(adapter);

  // The adapter folder alone: its adapter_config.json names the base model, loaded under it.
  const model = await loadPretrainedModel(adapter, { attentionMask: true });
  const server = await serve(model, tokenizer, { port: 0, modelName: 'fox-chat' });
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'fox-chat',
      messages: [{ role: 'user', content: 'What does the fox do?' }],
      max_tokens: 24,
      temperature: 0,
    }),
  });
  const reply = (await response.json()) as { choices: { message: { content: string } }[] };
  console.log(`served at ${server.url}/v1: ${JSON.stringify(reply.choices[0].message.content)}`);
  await server.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
