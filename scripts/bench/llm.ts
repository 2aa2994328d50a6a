// npm run bench:llm: checkpoints in the exact shape of real ones, made here from their configs with random
// weights (no download), then LoRA and full fine-tuning steps and greedy decoding: firebrand against
// transformers (+PEFT for LoRA) where python3-transformers is (the sid chroot), on the same libtorch, in
// alternating rounds, on each thread count. Prints each side's tokens/s, the median ratio, the first step
// against the steady ones, peak RSS, and how far the two sides' losses are apart.
//   BENCH_MODELS   smollm2-135m (default), qwen2.5-0.5b, tinyllama-1.1b, comma-separated
//   BENCH_THREADS  1,2     BENCH_ROUNDS 3     BENCH_STEPS 4 (a first step, then steady ones)
//   BENCH_LENGTH   128     BENCH_NEW_TOKENS 32     BENCH_JOBS lora,full,generate
//   PEFT_SRC       huggingface/peft's src/ folder (Debian has no PEFT); BENCH_PYTHON (default python3)
import { lastJsonOf, median } from './measures';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, fromPretrained, LlamaForCausalLM, saveSafetensors, Trainer, type LlamaConfig } from '../../src';

/** The configs of the checkpoints the bench stands in for (their config.json, as published). */
const MODELS: Record<string, LlamaConfig & { architectures: string[] }> = {
  'smollm2-135m': {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    vocab_size: 49152,
    hidden_size: 576,
    intermediate_size: 1536,
    num_hidden_layers: 30,
    num_attention_heads: 9,
    num_key_value_heads: 3,
    rms_norm_eps: 1e-5,
    rope_theta: 100000,
    max_position_embeddings: 8192,
    tie_word_embeddings: true,
  },
  'qwen2.5-0.5b': {
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    vocab_size: 151936,
    hidden_size: 896,
    intermediate_size: 4864,
    num_hidden_layers: 24,
    num_attention_heads: 14,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000,
    max_position_embeddings: 32768,
    tie_word_embeddings: true,
  },
  'tinyllama-1.1b': {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    vocab_size: 32000,
    hidden_size: 2048,
    intermediate_size: 5632,
    num_hidden_layers: 22,
    num_attention_heads: 32,
    num_key_value_heads: 4,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    max_position_embeddings: 2048,
    tie_word_embeddings: false,
  },
};
const LORA_TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];

const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').filter(Boolean);
/** An integer setting of at least `min`, or an error naming it. */
function integerSetting(name: string, fallback: number, min: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name}: expected an integer >= ${min}, got ${process.env[name]}`);
  return value;
}
const ROUNDS = integerSetting('BENCH_ROUNDS', 3, 1);
// A first step, then at least one steady one.
const STEPS = integerSetting('BENCH_STEPS', 4, 2);
const LENGTH = integerSetting('BENCH_LENGTH', 128, 1);
const NEW_TOKENS = integerSetting('BENCH_NEW_TOKENS', 32, 1);
const PYTHON = process.env.BENCH_PYTHON ?? 'python3';

/** `name`'s entries, each one `accepts` takes, or an error naming the first it does not. */
function checkedList(name: string, fallback: string, accepts: (entry: string) => boolean, expected: string): string[] {
  const entries = list(name, fallback);
  const wrong = entries.find((entry) => !accepts(entry));
  if (wrong !== undefined) throw new Error(`${name}: '${wrong}' is not ${expected}`);
  return entries;
}
const THREADS = checkedList('BENCH_THREADS', '1,2', (entry) => /^[1-9]\d*$/.test(entry), 'a thread count >= 1').map(
  Number,
);
const JOBS = checkedList(
  'BENCH_JOBS',
  'lora,full,generate',
  (entry) => ['lora', 'full', 'generate'].includes(entry),
  'lora, full or generate',
);
const script = path.join(__dirname, '..', '..', '..', 'scripts', 'bench', 'llm_bench.py');

type Measure = { skipped?: string; ms?: number[]; losses?: number[]; peakRssMb?: number; tokensPerSecond?: number };

const firebrand = (...args: string[]) => lastJsonOf<Measure>(process.execPath, [__filename, '--child', ...args]);
const transformers = (...args: string[]) => lastJsonOf<Measure>(PYTHON, [script, ...args]);

const tokenIds = (count: number, vocab: number) => Int32Array.from({ length: count }, (_, i) => (i * 7919) % vocab);

/** The checkpoint folder for `name`: config.json and model.safetensors with firebrand's seeded random weights. */
async function makeCheckpoint(name: string, folder: string): Promise<void> {
  const config = MODELS[name];
  const trainer = new Trainer({ model: new LlamaForCausalLM(config), loss: 'cross_entropy', optimizer: 'sgd' });
  await trainer.setup();
  const state = await trainer.stateDict();
  // transformers' initialisation (initializer_range 0.02), so that logits and losses are those of a real
  // model's scale: normal(0, 0.02) weights, zero biases, norms at one. A seeded generator (Box-Muller over an LCG).
  let seed = 1;
  const uniform = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) + 1) / 2147483649;
  for (const [name, tensor] of Object.entries(state)) {
    if (name.endsWith('norm.weight') || !(tensor.data instanceof Float32Array)) continue;
    const data = tensor.data;
    if (name.endsWith('.bias')) {
      data.fill(0);
      continue;
    }
    for (let i = 0; i < data.length; i++)
      data[i] = 0.02 * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  }
  // save_pretrained leaves a tied head out: it is the embedding.
  if (config.tie_word_embeddings) delete state['lm_head.weight'];
  fs.mkdirSync(folder, { recursive: true });
  await saveSafetensors(path.join(folder, 'model.safetensors'), state, { format: 'pt' });
  fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify({ ...config, torch_dtype: 'float32' }, null, 2));
}

/** Steps of `job` on `folder`: each step's milliseconds and loss, and the peak RSS. */
async function train(folder: string, job: string, threads: number): Promise<Measure> {
  const model = await fromPretrained(folder);
  const ms: number[] = [];
  const losses: number[] = [];
  let started = 0;
  const trainer = new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-4 },
    lora: job === 'lora' ? { r: 8, alpha: 16, targetModules: LORA_TARGETS } : undefined,
    config: { numEpochs: 1, maxSteps: STEPS, batchSize: 1, shuffle: false, numThreads: threads, progressBar: false },
    callbacks: {
      onBatchBegin: () => void (started = performance.now()),
      postTrainBatch: ({ loss }) => {
        ms.push(performance.now() - started);
        losses.push(loss);
      },
    },
  });
  const vocab = model.config.vocab_size as number;
  await trainer.fit(Dataset.fromTokens(tokenIds((LENGTH + 1) * STEPS, vocab), { contextLength: LENGTH }));
  return { ms, losses, peakRssMb: process.resourceUsage().maxRSS / 1024 };
}

async function generate(folder: string, threads: number, prompt: number[]): Promise<Measure> {
  const trainer = new Trainer({
    model: await fromPretrained(folder),
    loss: 'cross_entropy',
    optimizer: 'sgd',
    config: { numThreads: threads, progressBar: false },
  });
  const options = { maxNewTokens: NEW_TOKENS, greedy: true, stopTokens: [] };
  for await (const _ of trainer.generate(prompt, { ...options, maxNewTokens: 2 })); // warm-up
  const started = performance.now();
  let count = 0;
  for await (const _ of trainer.generate(prompt, options)) count += 1;
  return { tokensPerSecond: count / ((performance.now() - started) / 1000) };
}

async function child([mode, ...args]: string[]): Promise<Measure> {
  if (mode === 'make') {
    await makeCheckpoint(args[0], args[1]);
    return {};
  }
  if (mode === 'train') return train(args[0], args[1], Number(args[2]));
  return generate(args[0], Number(args[1]), args[2].split(',').map(Number));
}

/** tokens/s of a training measure: the steady steps' median (all but the first). */
const trainingSpeed = (measure: Measure) => LENGTH / (median((measure.ms as number[]).slice(1)) / 1000);

function report(job: string, threads: number, pairs: [Measure, Measure][]): void {
  const ours = pairs.map(([fb]) => (job === 'generate' ? (fb.tokensPerSecond as number) : trainingSpeed(fb)));
  const skipped = pairs[0][1].skipped;
  const theirs = skipped
    ? []
    : pairs.map(([, py]) => (job === 'generate' ? (py.tokensPerSecond as number) : trainingSpeed(py)));
  const line = [`  ${job.padEnd(8)} ${threads} thread${threads > 1 ? 's' : ' '}`];
  line.push(`firebrand ${ours.map((value) => value.toFixed(1)).join(', ')} tokens/s`);
  if (skipped) {
    line.push(`transformers skipped: ${skipped}`);
  } else {
    line.push(`transformers ${theirs.map((value) => value.toFixed(1)).join(', ')}`);
    line.push(`median ratio ${median(ours.map((value, i) => value / theirs[i])).toFixed(2)}x`);
  }
  if (job !== 'generate') {
    const [fb, py] = pairs[0];
    const ms = fb.ms as number[];
    line.push(`first step ${(ms[0] / median(ms.slice(1))).toFixed(2)}x a steady one`);
    line.push(
      `peak RSS ${(fb.peakRssMb as number).toFixed(0)} MB${py.peakRssMb ? ` (transformers ${py.peakRssMb.toFixed(0)})` : ''}`,
    );
    // LoRA's A matrices are drawn by each side's own generator: only its first step (B = 0) is comparable.
    const compared = job === 'lora' ? 1 : Math.min(3, STEPS);
    if (py.losses) {
      const apart = (fb.losses as number[])
        .slice(0, compared)
        .map((loss, i) => Math.abs(loss - (py.losses as number[])[i]) / Math.abs(loss));
      line.push(
        `losses of ${compared} step${compared > 1 ? 's' : ''} apart by ${Math.max(...apart).toExponential(1)} (rel)`,
      );
    }
  }
  console.log(line.join('; '));
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bench-llm-'));
  try {
    for (const name of list('BENCH_MODELS', 'smollm2-135m')) {
      if (MODELS[name] === undefined) throw new Error(`BENCH_MODELS: no '${name}' (${Object.keys(MODELS).join(', ')})`);
      const folder = path.join(work, name);
      firebrand('make', name, folder);
      console.log(
        `${name}: batch 1 x ${LENGTH} tokens, AdamW lr 1e-4, LoRA r 8 alpha 16 on ${LORA_TARGETS.join(',')}; ${os.cpus()[0]?.model ?? 'an unknown CPU'}`,
      );
      const prompt = Array.from(tokenIds(32, MODELS[name].vocab_size)).join(',');
      for (const threads of THREADS) {
        for (const job of JOBS) {
          const args = job === 'generate' ? [folder, `${threads}`, prompt] : [folder, job, `${threads}`];
          const pyArgs =
            job === 'generate'
              ? ['generate', folder, `${threads}`, prompt, `${NEW_TOKENS}`]
              : ['train', folder, job, `${threads}`, `${STEPS}`, `${LENGTH}`];
          const pairs = Array.from({ length: ROUNDS }, (_, round): [Measure, Measure] => {
            const mode = job === 'generate' ? 'generate' : 'train';
            if (round % 2 === 1) {
              const py = transformers(...pyArgs);
              return [firebrand(mode, ...args), py];
            }
            const fb = firebrand(mode, ...args);
            return [fb, transformers(...pyArgs)];
          });
          report(job, threads, pairs);
        }
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  child(process.argv.slice(3))
    .then((measure) => console.log(JSON.stringify(measure)))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
} else {
  void main();
}
