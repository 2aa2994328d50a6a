// npm run bench:llm: checkpoints in the exact shape of real ones, made here from their configs with random
// weights (no download), then loading one, LoRA and full fine-tuning steps and greedy decoding: firebrand against
// transformers (+PEFT for LoRA) where python3-transformers is (the sid chroot), on the same libtorch, in
// alternating rounds, on each thread count. Prints each side's tokens/s, the median ratio, the first step
// against the steady ones, peak RSS, and how far the two sides' losses are apart. Loading is timed from the call
// to the prompt's logits (firebrand reads the weights when the model is first used).
//   BENCH_MODELS   smollm2-135m (default), qwen2.5-0.5b, tinyllama-1.1b, comma-separated
//   BENCH_THREADS  1,2     BENCH_ROUNDS 3     BENCH_STEPS 4 (a first step, then steady ones)
//   BENCH_LENGTH   128     BENCH_NEW_TOKENS 32     BENCH_JOBS load,lora,full,generate
//   BENCH_DTYPES   float32 (default), bfloat16, int8 (int8 linear layers in a bfloat16 model, QLoRA-style)
// Decoding's tokens/s count the tokens after the first (the prompt's forward pass is printed apart, as
// the first token's wait), and its fraction of the memory bandwidth is tokens/s x the weight bytes a
// token reads, over a STREAM triad on libtorch (python3-torch).
//   PEFT_SRC       huggingface/peft's src/ folder (Debian has no PEFT); BENCH_PYTHON (default python3)
import { makeCheckpoint, MODELS } from './llm-checkpoints';
import { lastJsonOf, median } from './measures';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, fromPretrained, Trainer, type FromPretrainedOptions } from '../../src';

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
const NEW_TOKENS = integerSetting('BENCH_NEW_TOKENS', 32, 2);
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
  'load,lora,full,generate',
  (entry) => ['load', 'lora', 'full', 'generate'].includes(entry),
  'load, lora, full or generate',
);
/** The weights of each BENCH_DTYPES entry, as fromPretrained takes them. */
const WEIGHTS: Record<string, FromPretrainedOptions> = {
  float32: {},
  bfloat16: { dtype: 'bfloat16' },
  int8: { dtype: 'bfloat16', quantize: 'int8' },
};
const DTYPES = checkedList('BENCH_DTYPES', 'float32', (entry) => entry in WEIGHTS, 'float32, bfloat16 or int8');
const script = path.join(__dirname, '..', '..', '..', 'scripts', 'bench', 'llm_bench.py');

type Measure = {
  skipped?: string;
  ms?: number[];
  losses?: number[];
  peakRssMb?: number;
  tokensPerSecond?: number;
  firstTokenMs?: number;
  lastLogits?: number[];
  gbPerSecond?: number;
  seconds?: number;
};

const firebrand = (...args: string[]) => lastJsonOf<Measure>(process.execPath, [__filename, '--child', ...args]);
const transformers = (...args: string[]) => lastJsonOf<Measure>(PYTHON, [script, ...args]);

const tokenIds = (count: number, vocab: number) => Int32Array.from({ length: count }, (_, i) => (i * 7919) % vocab);

/**
 * Steps of `job` on `folder`: each step's milliseconds and loss, and the peak RSS. LoRA starts from the
 * adapter folder's weights when one is given (PEFT's initial adapter, which the Python side loads too).
 */
async function train(folder: string, job: string, threads: number, dtype: string, adapter?: string): Promise<Measure> {
  const model = await fromPretrained(folder, WEIGHTS[dtype]);
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
  if (job === 'lora' && adapter) await trainer.loadAdapter(adapter);
  await trainer.fit(Dataset.fromTokens(tokenIds((LENGTH + 1) * STEPS, vocab), { contextLength: LENGTH }));
  return { ms, losses, peakRssMb: process.resourceUsage().maxRSS / 1024 };
}

/** Seconds from fromPretrained to the prompt's logits (the weights are read at the first use), and peak RSS. */
async function load(folder: string, threads: number, prompt: number[], dtype: string): Promise<Measure> {
  const started = performance.now();
  const trainer = new Trainer({
    model: await fromPretrained(folder, WEIGHTS[dtype]),
    loss: 'cross_entropy',
    optimizer: 'sgd',
    config: { numThreads: threads, progressBar: false },
  });
  await trainer.predict(Int32Array.from(prompt), [1, prompt.length]);
  return { seconds: (performance.now() - started) / 1000, peakRssMb: process.resourceUsage().maxRSS / 1024 };
}

async function generate(folder: string, threads: number, prompt: number[], dtype: string): Promise<Measure> {
  const trainer = new Trainer({
    model: await fromPretrained(folder, WEIGHTS[dtype]),
    loss: 'cross_entropy',
    optimizer: 'sgd',
    config: { numThreads: threads, progressBar: false },
  });
  const options = { maxNewTokens: NEW_TOKENS, greedy: true, stopTokens: [] };
  for await (const _ of trainer.generate(prompt, { ...options, maxNewTokens: 2 })); // warm-up
  // Arrival times: the prompt's forward pass until the first token, the decoding steps after it.
  const started = performance.now();
  const arrivals: number[] = [];
  for await (const _ of trainer.generate(prompt, options)) arrivals.push(performance.now());
  const { tokensPerSecond, firstTokenMs } = decodingSpeed(started, arrivals);
  const logits = await trainer.predict(Int32Array.from(prompt), [1, prompt.length]);
  const vocab = logits.shape[2];
  return {
    tokensPerSecond,
    firstTokenMs,
    lastLogits: Array.from(logits.data.subarray(logits.data.length - vocab), Number),
  };
}

/** Decoding's tokens/s after the first token (the rate the weights' bytes bound), and the first token's wait. */
function decodingSpeed(started: number, arrivals: number[]): { tokensPerSecond: number; firstTokenMs: number } {
  if (arrivals.length < 2)
    throw new Error(`BENCH_NEW_TOKENS: decoding needs at least 2 tokens, got ${arrivals.length}`);
  const last = arrivals[arrivals.length - 1];
  return {
    tokensPerSecond: (arrivals.length - 1) / ((last - arrivals[0]) / 1000),
    firstTokenMs: arrivals[0] - started,
  };
}

/** The bytes of weights one decoded token reads: every linear layer's and the head's (an embedding row is few). */
function weightBytesPerToken(name: string, dtype: string): number {
  const c = MODELS[name];
  const heads = c.num_attention_heads as number;
  const kv = ((c.num_key_value_heads as number) / heads) * c.hidden_size;
  const attention = 2 * c.hidden_size * c.hidden_size + 2 * c.hidden_size * kv;
  const linears = c.num_hidden_layers * (attention + 3 * c.hidden_size * c.intermediate_size);
  const head = c.vocab_size * c.hidden_size;
  const bytes = { float32: [4, 4], bfloat16: [2, 2], int8: [1, 2] }[dtype] as number[];
  return linears * bytes[0] + head * bytes[1];
}

async function child([mode, ...args]: string[]): Promise<Measure> {
  if (mode === 'make') {
    await makeCheckpoint(MODELS[args[0]], args[1]);
    return {};
  }
  if (mode === 'train') return train(args[0], args[1], Number(args[2]), args[3], args[4]);
  if (mode === 'load') return load(args[0], Number(args[1]), args[2].split(',').map(Number), args[3]);
  return generate(args[0], Number(args[1]), args[2].split(',').map(Number), args[3]);
}

/** tokens/s of a training measure: the steady steps' median (all but the first). */
const trainingSpeed = (measure: Measure) => LENGTH / (median((measure.ms as number[]).slice(1)) / 1000);

/**
 * Where a row was measured: the model, job, threads and dtype, the bandwidth, float32's logits to compare to,
 * and the initial LoRA adapter both sides load (when PEFT made one).
 */
type Row = {
  name: string;
  job: string;
  threads: number;
  dtype: string;
  triad: Measure;
  float32Logits?: number[];
  adapter?: string;
};

/** The first step against the steady ones, peak RSS, and how far the two sides' losses are apart. */
function trainingNotes([fb, py]: [Measure, Measure], { job, adapter }: Row): string[] {
  const firstStep = ({ ms }: Measure) => ((ms as number[])[0] / median((ms as number[]).slice(1))).toFixed(2);
  const notes = [`first step ${firstStep(fb)}x a steady one${py.ms ? ` (transformers ${firstStep(py)}x)` : ''}`];
  notes.push(
    `peak RSS ${(fb.peakRssMb as number).toFixed(0)} MB${py.peakRssMb ? ` (transformers ${py.peakRssMb.toFixed(0)})` : ''}`,
  );
  // Without a shared initial adapter, LoRA's A matrices are drawn by each side's own generator: only
  // its first step (B = 0) is comparable.
  const compared = job === 'lora' && !adapter ? 1 : Math.min(3, STEPS);
  if (py.losses) {
    const apart = (fb.losses as number[])
      .slice(0, compared)
      .map((loss, i) => Math.abs(loss - (py.losses as number[])[i]) / Math.abs(loss));
    notes.push(
      `losses of ${compared} step${compared > 1 ? 's' : ''} apart by ${Math.max(...apart).toExponential(1)} (rel)`,
    );
  }
  return notes;
}

/** The prompt's wait for a first token, decoding's fraction of the memory bandwidth, and its logits' distance from float32's. */
function decodingNotes(row: Row, tokensPerSecond: number, pairs: [Measure, Measure][]): string[] {
  const bytes = weightBytesPerToken(row.name, row.dtype);
  const firstToken = (side: 0 | 1) => median(pairs.map((pair) => pair[side].firstTokenMs as number)).toFixed(0);
  const notes = [`first token ${firstToken(0)} ms${pairs[0][1].skipped ? '' : ` (transformers ${firstToken(1)})`}`];
  notes.push(`reads ${(bytes / 1e6).toFixed(0)} MB a token`);
  const logits = pairs[0][0].lastLogits as number[];
  if (row.triad.gbPerSecond) {
    const fraction = (tokensPerSecond * bytes) / (row.triad.gbPerSecond * 1e9);
    notes.push(`${fraction.toFixed(2)} of the triad's ${row.triad.gbPerSecond.toFixed(1)} GB/s`);
  } else {
    notes.push(`bandwidth unmeasured: ${row.triad.skipped}`);
  }
  if (row.dtype !== 'float32' && row.float32Logits) {
    const reference = row.float32Logits;
    const apart = Math.max(...logits.map((value, i) => Math.abs(value - reference[i])));
    const scale = Math.max(...reference.map(Math.abs));
    notes.push(`last logits ${apart.toFixed(3)} from float32's (largest ${scale.toFixed(2)})`);
  }
  return notes;
}

/** Each side's seconds to the first logits, how many times faster firebrand is, and both peak RSS. */
function reportLoad({ threads, dtype }: Row, pairs: [Measure, Measure][]): void {
  const seconds = (side: 0 | 1) => pairs.map((pair) => pair[side].seconds as number);
  const rss = (side: 0 | 1) => median(pairs.map((pair) => pair[side].peakRssMb as number)).toFixed(0);
  const line = [`  ${'load'.padEnd(8)} ${dtype.padEnd(8)} ${threads} thread${threads > 1 ? 's' : ' '}`];
  line.push(
    `firebrand ${seconds(0)
      .map((value) => value.toFixed(2))
      .join(', ')} s to the first logits`,
  );
  if (pairs[0][1].skipped) {
    line.push(`transformers skipped: ${pairs[0][1].skipped}`, `peak RSS ${rss(0)} MB`);
  } else {
    const ours = seconds(0);
    line.push(
      `transformers ${seconds(1)
        .map((value) => value.toFixed(2))
        .join(', ')}`,
    );
    line.push(`median ratio ${median(seconds(1).map((value, i) => value / ours[i])).toFixed(2)}x`);
    line.push(`peak RSS ${rss(0)} MB (transformers ${rss(1)})`);
  }
  console.log(line.join('; '));
}

function report(row: Row, pairs: [Measure, Measure][]): void {
  const { job, threads, dtype } = row;
  if (job === 'load') return reportLoad(row, pairs);
  const speed = (measure: Measure) =>
    job === 'generate' ? (measure.tokensPerSecond as number) : trainingSpeed(measure);
  const ours = pairs.map(([fb]) => speed(fb));
  const skipped = pairs[0][1].skipped;
  const line = [`  ${job.padEnd(8)} ${dtype.padEnd(8)} ${threads} thread${threads > 1 ? 's' : ' '}`];
  line.push(`firebrand ${ours.map((value) => value.toFixed(1)).join(', ')} tokens/s`);
  if (skipped) {
    line.push(`transformers skipped: ${skipped}`);
  } else {
    const theirs = pairs.map(([, py]) => speed(py));
    line.push(`transformers ${theirs.map((value) => value.toFixed(1)).join(', ')}`);
    line.push(`median ratio ${median(ours.map((value, i) => value / theirs[i])).toFixed(2)}x`);
  }
  if (job === 'generate') line.push(...decodingNotes(row, median(ours), pairs));
  else line.push(...trainingNotes(pairs[0], row));
  console.log(line.join('; '));
}

/** ROUNDS pairs of firebrand's and transformers' measures of `row`, alternating which side goes first. */
function measureRow(row: Row, folder: string, prompt: string): [Measure, Measure][] {
  const { job, threads, dtype } = row;
  const training = job === 'lora' || job === 'full';
  const mode = training ? 'train' : job;
  const adapter = job === 'lora' && row.adapter ? [row.adapter] : [];
  const args = training ? [folder, job, `${threads}`, dtype, ...adapter] : [folder, `${threads}`, prompt, dtype];
  const pyArgs = training
    ? ['train', folder, job, `${threads}`, `${STEPS}`, `${LENGTH}`, dtype, ...adapter]
    : job === 'generate'
      ? ['generate', folder, `${threads}`, prompt, `${NEW_TOKENS}`, dtype]
      : ['load', folder, `${threads}`, prompt, dtype];
  return Array.from({ length: ROUNDS }, (_, round): [Measure, Measure] => {
    if (round % 2 === 1) {
      const py = transformers(...pyArgs);
      return [firebrand(mode, ...args), py];
    }
    const fb = firebrand(mode, ...args);
    return [fb, transformers(...pyArgs)];
  });
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
      // PEFT's initial adapter (seed 0), which both sides' LoRA steps start from.
      const adapterFolder = path.join(work, `${name}-adapter`);
      const adapter = JOBS.includes('lora') && !transformers('adapter', folder, adapterFolder).skipped;
      for (const threads of THREADS) {
        const triad = transformers('triad', `${threads}`);
        let float32Logits: number[] | undefined;
        for (const dtype of DTYPES) {
          for (const job of JOBS) {
            const row: Row = { name, job, threads, dtype, triad, float32Logits };
            if (adapter) row.adapter = adapterFolder;
            const pairs = measureRow(row, folder, prompt);
            if (job === 'generate' && dtype === 'float32') float32Logits = pairs[0][0].lastLogits;
            report(row, pairs);
          }
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
