// npm run bench:serve: a load test of `serve`'s OpenAI API. Concurrent clients each stream chat
// completions (OpenAI's npm client, server-sent events) for a fixed number of tokens; the server runs
// batched (the defaults) and one sequence at a time (maxBatchSize 1, maxConcurrentBatches 1), in
// alternating rounds. Prints, per concurrency: generated tokens/s over the whole run, and the median and
// p99 time to first token.
//   BENCH_MODEL_DIR     a chat model folder with its tokenizer; default: SmolLM2-135M's shape with random
//                       weights and the vocabulary of examples/data/tiny-chat-llama's tokenizer
//   BENCH_CONCURRENCY   1,4,8     BENCH_ROUNDS 2     BENCH_NEW_TOKENS 32     BENCH_THREADS 2
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';

import { HuggingFaceTokenizer, loadPretrainedModel, serve, type ServeOptions } from '../../src';
import { makeCheckpoint, MODELS } from './llm-checkpoints';
import { median } from './measures';

const integer = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: expected an integer >= 1`);
  return value;
};
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,4,8').split(',').map(Number);
const ROUNDS = integer('BENCH_ROUNDS', 2);
const NEW_TOKENS = integer('BENCH_NEW_TOKENS', 32);
const THREADS = integer('BENCH_THREADS', 2);
const tokenizerFolder = path.join(__dirname, '..', '..', '..', 'examples', 'data', 'tiny-chat-llama');

/** The model folder: BENCH_MODEL_DIR, or SmolLM2-135M's shape with the example tokenizer beside it. */
async function modelFolder(): Promise<string> {
  if (process.env.BENCH_MODEL_DIR) return process.env.BENCH_MODEL_DIR;
  const folder = path.join(os.tmpdir(), 'firebrand-bench-serve-smollm2');
  const tokenizer = await HuggingFaceTokenizer.fromPretrained(tokenizerFolder);
  if (!fs.existsSync(path.join(folder, 'model.safetensors'))) {
    await makeCheckpoint({ ...MODELS['smollm2-135m'], vocab_size: tokenizer.vocabSize }, folder);
  }
  for (const file of ['tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja']) {
    fs.copyFileSync(path.join(tokenizerFolder, file), path.join(folder, file));
  }
  return folder;
}

interface Run {
  tokensPerSecond: number;
  firstTokenMs: number[];
}

/** `clients` concurrent streams of NEW_TOKENS tokens each against `url`. */
async function load(url: string, clients: number): Promise<Run> {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const started = performance.now();
  const firstTokenMs: number[] = [];
  let tokens = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const sent = performance.now();
      const stream = await client.chat.completions.create({
        model: 'bench',
        messages: [{ role: 'user', content: `Question ${i}: ${'tell me more '.repeat(1 + (i % 4))}` }],
        max_tokens: NEW_TOKENS,
        // No seed: a request's own seed needs a batch (a generator) of its own.
        temperature: 0.8,
        stream: true,
        stream_options: { include_usage: true },
      });
      let first = true;
      for await (const chunk of stream) {
        if (first && chunk.choices[0]?.delta.content) {
          firstTokenMs.push(performance.now() - sent);
          first = false;
        }
        tokens += chunk.usage?.completion_tokens ?? 0;
      }
    }),
  );
  return { tokensPerSecond: tokens / ((performance.now() - started) / 1000), firstTokenMs };
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)];

async function main(): Promise<void> {
  const folder = await modelFolder();
  const tokenizer = await HuggingFaceTokenizer.fromPretrained(folder);
  const model = await loadPretrainedModel(folder, { attentionMask: true, numThreads: THREADS });
  const setups: [string, ServeOptions][] = [
    ['batched', {}],
    ['one at a time', { maxBatchSize: 1, maxConcurrentBatches: 1 }],
  ];
  console.log(`serve: ${folder}, ${THREADS} threads, ${NEW_TOKENS} tokens per stream, ${ROUNDS} rounds`);
  for (const clients of CONCURRENCY) {
    const runs = new Map<string, Run[]>(setups.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, options] of round % 2 ? [...setups].reverse() : setups) {
        const server = await serve(model, tokenizer, {
          ...options,
          port: 0,
          modelName: 'bench',
          defaultMaxTokens: NEW_TOKENS,
        });
        runs.get(name)?.push(await load(server.url, clients));
        await server.close();
      }
    }
    for (const [name, measured] of runs) {
      const firsts = measured.flatMap(({ firstTokenMs }) => firstTokenMs);
      console.log(
        `  ${clients} streams, ${name.padEnd(13)}: ${median(measured.map((run) => run.tokensPerSecond)).toFixed(1)} tokens/s, ` +
          `first token p50 ${median(firsts).toFixed(0)} ms, p99 ${percentile(firsts, 99).toFixed(0)} ms`,
      );
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
