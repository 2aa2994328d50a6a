// A Hugging Face Llama checkpoint (random weights, ~31M parameters; ~134M for the load's memory check),
// firebrand against transformers on the same machine and libtorch, 1 thread, each measure in its own
// process (peak RSS is per process): training tokens/s (AdamW, cross-entropy over every position),
// greedy generation tokens/s with the cache, load seconds and peak RSS against the file's size.
// Training and generation run BENCH_ROUNDS times, the two sides taking turns, and report the median
// ratio: on a shared machine a single pair swings from 0.9x to 1.5x with the neighbours' load.
// Run where python3-transformers is (the sid chroot):
//   npm run bench:pretrained        (BENCH_STEPS, BENCH_BATCH, BENCH_LENGTH, BENCH_NEW_TOKENS, BENCH_ROUNDS size it)
import { lastJsonOf, median } from './measures';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, fromPretrained, Trainer } from '../../src';

const STEPS = Number(process.env.BENCH_STEPS ?? 4);
const BATCH = Number(process.env.BENCH_BATCH ?? 4);
const LENGTH = Number(process.env.BENCH_LENGTH ?? 128);
const PROMPT = 32;
const NEW_TOKENS = Number(process.env.BENCH_NEW_TOKENS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PYTHON = process.env.BENCH_PYTHON ?? 'python3';
const script = path.join(__dirname, '..', '..', '..', 'scripts', 'bench', 'pretrained_llama.py');

type Measure = Record<string, number | number[]>;

const python = (...args: string[]) => lastJsonOf<Measure>(PYTHON, [script, ...args]);
const firebrand = (...args: string[]) => lastJsonOf<Measure>(process.execPath, [__filename, '--child', ...args]);

/** Seeded token ids, as many as asked. */
function tokens(count: number, vocab: number, seed: number): Int32Array {
  let state = seed;
  return Int32Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % vocab;
  });
}

/** ROUNDS pairs of measures, the sides taking turns: each side's tokens/s and the median ratio. */
function rounds(measure: () => [Measure, Measure]): { firebrand: number[]; transformers: number[]; ratio: number } {
  const pairs = Array.from({ length: ROUNDS }, measure);
  const speed = (side: number) => pairs.map((pair) => pair[side].tokensPerSecond as number);
  const [firebrand, transformers] = [speed(0), speed(1)];
  return { firebrand, transformers, ratio: median(firebrand.map((value, i) => value / transformers[i])) };
}

const listed = (values: number[]) => values.map((value) => value.toFixed(0)).join(', ');

/** The generation prompt both sides take. */
const promptOf = (vocab: number) => tokens(PROMPT, vocab, 2);

async function child(mode: string, folder: string): Promise<Measure> {
  const started = performance.now();
  const model = await fromPretrained(folder);
  const trainer = new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-4 },
    config: { numThreads: 1, progressBar: false, batchSize: BATCH, shuffle: false, seed: 0 },
  });
  await trainer.setup();
  const seconds = (performance.now() - started) / 1000;
  if (mode === 'load') return { seconds, peakRssMb: process.resourceUsage().maxRSS / 1024 };
  const vocab = model.config.vocab_size as number;
  if (mode === 'train') {
    const ids = tokens((STEPS + 1) * BATCH * LENGTH + 1, vocab, 1);
    const windows = Dataset.fromTokens(ids, { contextLength: LENGTH, stride: LENGTH });
    await trainer.fit(windows.slice(0, BATCH), { numEpochs: 1 }); // warm-up
    const begun = performance.now();
    const history = await trainer.fit(windows.slice(BATCH, (STEPS + 1) * BATCH), { numEpochs: 1 });
    const elapsed = (performance.now() - begun) / 1000;
    return { tokensPerSecond: (STEPS * BATCH * LENGTH) / elapsed, loss: history.epochs[0].loss };
  }
  const prompt = promptOf(vocab);
  for await (const _ of trainer.generate(prompt, { maxNewTokens: 4, greedy: true, stopTokens: [] })); // warm-up
  const begun = performance.now();
  const generated: number[] = [];
  for await (const token of trainer.generate(prompt, { maxNewTokens: NEW_TOKENS, greedy: true, stopTokens: [] }))
    generated.push(token);
  return { tokensPerSecond: NEW_TOKENS / ((performance.now() - begun) / 1000), tokens: generated };
}

function main(): void {
  const [flag, mode, folder] = process.argv.slice(2);
  if (flag === '--child') {
    child(mode, folder)
      .then((measure) => console.log(JSON.stringify(measure)))
      .catch((error: unknown) => {
        console.error(error);
        process.exitCode = 1;
      });
    return;
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bench-llama-'));
  try {
    const [small, large] = [path.join(work, 'small'), path.join(work, 'large')];
    const parameters = python('make', small, 'small').parameters as number;
    console.log(`Llama of ${(parameters / 1e6).toFixed(1)}M parameters, 1 thread, ${os.cpus()[0].model}`);
    const training = rounds(() => [
      firebrand('train', small),
      python('train', small, `${STEPS}`, `${BATCH}`, `${LENGTH}`),
    ]);
    console.log(
      `training (AdamW, batch ${BATCH} x ${LENGTH} tokens, ${STEPS} steps), tokens/s over ${ROUNDS} rounds: firebrand ${listed(training.firebrand)}; ` +
        `transformers in a PyTorch loop ${listed(training.transformers)}: median ratio ${training.ratio.toFixed(2)}x`,
    );
    const vocab = JSON.parse(fs.readFileSync(path.join(small, 'config.json'), 'utf8')).vocab_size as number;
    const prompt = Array.from(promptOf(vocab)).join(',');
    const generated: [Measure, Measure][] = [];
    const generation = rounds(() => {
      const pair: [Measure, Measure] = [
        firebrand('generate', small),
        python('generate', small, prompt, `${NEW_TOKENS}`),
      ];
      generated.push(pair);
      return pair;
    });
    const same = generated.every(([fb, py]) => JSON.stringify(fb.tokens) === JSON.stringify(py.tokens));
    console.log(
      `greedy generation with the cache (${PROMPT}-token prompt, ${NEW_TOKENS} new), tokens/s over ${ROUNDS} rounds: firebrand ${listed(generation.firebrand)}; ` +
        `transformers' generate ${listed(generation.transformers)}: median ratio ${generation.ratio.toFixed(2)}x; same tokens: ${same}`,
    );
    const largeParameters = python('make', large, 'large').parameters as number;
    for (const [name, folder] of [
      [`${(parameters / 1e6).toFixed(0)}M`, small],
      [`${(largeParameters / 1e6).toFixed(0)}M`, large],
    ]) {
      const [fb, py] = [firebrand('load', folder), python('load', folder)];
      const size = fs.statSync(path.join(folder, 'model.safetensors')).size / 2 ** 20;
      console.log(
        `load ${name} (model.safetensors ${size.toFixed(0)} MB): firebrand ${(fb.seconds as number).toFixed(2)} s, peak RSS ${(fb.peakRssMb as number).toFixed(0)} MB; ` +
          `transformers' from_pretrained ${(py.seconds as number).toFixed(2)} s, ${(py.peakRssMb as number).toFixed(0)} MB`,
      );
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main();
