// Host memory between steps: freed activations stay in malloc's heaps, or in
// firebrand's cache of large blocks, for the next step instead of going back
// to the kernel and being faulted in again; the cache goes back when the fit ends.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

interface Measured {
  /** Minor page faults in the first fit's first step, where the gradients and the optimizer state are new. */
  firstStepFaults: number;
  /**
   * Minor page faults per step of the second fit, between steps of one epoch (an epoch's first step may
   * fault in what the cache gave back when the previous epoch ended).
   */
  faultsPerStep: number;
  /** Resident MB at the last batch's end, and after the fit returned. */
  rssAtLastBatch: number;
  rssAfterFit: number;
}

/** A classifier of `features` inputs, `classes` outputs (`hidden` widths between), batch `batch`. */
interface Classifier {
  features: number;
  hidden: number[];
  classes: number;
  batch: number;
}

/** A tied-embedding Llama of `vocab` tokens, `hidden` wide, on batches of one `length`-token window. */
interface TiedLanguageModel {
  vocab: number;
  hidden: number;
  length: number;
}

const classifierCode = (layers: Classifier) => `
  const { features, hidden, classes, batch } = ${JSON.stringify(layers)};
  const samples = batch * 6;
  const data = Dataset.fromArrays({
    inputs: new Float32Array(samples * features).map((_, i) => Math.sin(i)), inputShape: [samples, features],
    targets: new Int32Array(samples).map((_, i) => i % classes),
  });
  const widths = [features, ...hidden, classes];
  const model = nn.sequential(...widths.slice(1).flatMap((width, i) =>
    i + 2 < widths.length ? [nn.linear(widths[i], width), nn.relu()] : [nn.linear(widths[i], width)]));`;

const languageModelCode = ({ vocab, hidden, length }: TiedLanguageModel) => `
  const model = new LlamaForCausalLM({
    vocab_size: ${vocab}, hidden_size: ${hidden}, intermediate_size: ${2 * hidden}, num_hidden_layers: 4,
    num_attention_heads: 4, num_key_value_heads: 4, max_position_embeddings: ${length}, tie_word_embeddings: true,
  });
  const data = Dataset.fromTokens(Int32Array.from({ length: ${7 * (length + 1)} }, (_, i) => (i * 7919) % ${vocab}),
    { contextLength: ${length} });`;

/** A fresh process fits the model (Adam; a language model on batches of 1) twice and measures both fits. */
function measure(layers: Classifier | TiedLanguageModel, env: NodeJS.ProcessEnv): Measured {
  const language = 'vocab' in layers;
  const script = `
    const { Dataset, LlamaForCausalLM, nn, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
    (async () => {
      ${language ? languageModelCode(layers) : classifierCode(layers)}
      const mb = () => process.memoryUsage().rss / 2 ** 20;
      const faultsNow = () => process.resourceUsage().minorPageFault;
      let rssAtLastBatch = 0;
      let measuring = false;
      let firstStepFaults;
      let begun = 0;
      const ends = [];
      const trainer = new Trainer({
        model, loss: 'cross_entropy', optimizer: 'adam',
        config: { batchSize: ${language ? 1 : 'batch'}, numThreads: 1, progressBar: false },
        callbacks: {
          onBatchBegin: () => void (begun = faultsNow()),
          postTrainBatch: ({ epoch }) => {
            rssAtLastBatch = mb();
            firstStepFaults ??= faultsNow() - begun;
            if (measuring) ends.push({ epoch, faults: faultsNow() });
          },
        },
      });
      await trainer.fit(data, { numEpochs: 1 });
      measuring = true;
      await trainer.fit(data, { numEpochs: 2 });
      const steps = ends.slice(1).filter((end, i) => end.epoch === ends[i].epoch);
      const faults = ends.slice(1).reduce((sum, end, i) => sum + (end.epoch === ends[i].epoch ? end.faults - ends[i].faults : 0), 0);
      const faultsPerStep = faults / steps.length;
      console.log(JSON.stringify({ firstStepFaults, faultsPerStep, rssAtLastBatch, rssAfterFit: mb() }));
    })();`;
  const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, ...env } });
  expect(result.status, result.stderr).to.equal(0);
  return JSON.parse(result.stdout.trim().split('\n').pop() as string) as Measured;
}

/**
 * Minor page faults of each of `calls` predict calls, in a fresh process, of the model `model` (code) on one batch of
 * `shape` (a matrix).
 */
function predictFaults(model: string, shape: [number, number], calls: number): number[] {
  const script = `
    const { nn, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
    (async () => {
      const trainer = new Trainer({ model: ${model}, config: { numThreads: 1, progressBar: false } });
      const inputs = new Float32Array(${shape[0] * shape[1]}).map((_, i) => Math.sin(i));
      const faults = [];
      for (let call = 0; call < ${calls}; call++) {
        const before = process.resourceUsage().minorPageFault;
        await trainer.predict(inputs, ${JSON.stringify(shape)}, { batchSize: ${shape[0]} });
        faults.push(process.resourceUsage().minorPageFault - before);
      }
      console.log(JSON.stringify(faults));
    })();`;
  const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  expect(result.status, result.stderr).to.equal(0);
  return JSON.parse(result.stdout.trim().split('\n').pop() as string) as number[];
}

/** A 784-256-256-10 MLP, batch 128: activations of 128 KB, under glibc's thresholds once raised. */
const mlp = { features: 784, hidden: [256, 256], classes: 10, batch: 128 };
/** Logits of 1024 x 16384 floats: 64 MB each (and their log-softmax and gradient), past any of glibc's. */
const wideHead = { features: 64, hidden: [], classes: 16384, batch: 1024 };
const glibcDefaults = 'glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072';

describe('host memory', () => {
  before(function () {
    if (process.platform !== 'linux') {
      console.log(`      skipped: malloc settings are glibc's, and this is ${process.platform}`);
      this.skip();
    }
  });

  it('keeps freed activations for the next step: few page faults per step', () => {
    expect(measure(mlp, {}).faultsPerStep).to.be.below(50);
  });

  it("makes the gradients' and Adam's memory before the first step: it faults in no more than its activations", () => {
    // 2 x 16 MB weights: their gradients and Adam's two moments are 24,576 pages when faulted in by the step.
    const measured = measure({ features: 2048, hidden: [2048], classes: 2048, batch: 8 }, {});
    expect(measured.firstStepFaults, JSON.stringify(measured)).to.be.below(3000);
    expect(measured.faultsPerStep, JSON.stringify(measured)).to.be.below(100);
  });

  it('keeps the blocks of every size a step needs when sizes peak at different times (a tied embedding)', () => {
    // The tied 16 MB embedding's gradient comes from the head and the lookup, summed: three blocks of its
    // size are live at once, at the end of backward. Held to the peak of live bytes, the cache gave back
    // 87 MB of a step's blocks and faulted them in again at every step (20,490 faults a step).
    const measured = measure({ vocab: 16384, hidden: 256, length: 512 }, {});
    expect(measured.faultsPerStep, JSON.stringify(measured)).to.be.below(200);
  });

  it("keeps a model's freed blocks, its inputs' copy among them, for its next predict call, as onnxruntime's arena does", () => {
    // Each call's hidden activations are 42 MB (16,384 x 640 floats): 10,240 pages, and as many for the ReLU;
    // so is the inputs' copy, made on the JS thread before the call runs. All are past glibc's mmap threshold.
    const [first, second, third] = predictFaults(
      'nn.sequential(nn.linear(640, 640), nn.relu(), nn.linear(640, 16))',
      [16384, 640],
      3,
    );
    expect(first, 'the first call faults its activations in').to.be.above(10240);
    expect(Math.max(second, third), JSON.stringify([first, second, third])).to.be.below(2000);
  });

  it('drops each value of a forward once no later op reads it: a predict holds a few values at once, not all', () => {
    // 32 adds of 16 MB values (4 x 1024 x 1024 floats), each reading the input: held to the end of the
    // forward, they were 512 MB more at the peak than the input, its copy and the output.
    const script = `
      const { nn, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
      class Sums extends nn.Module {
        forward(x) {
          let sum = x;
          for (let i = 0; i < 32; i++) sum = sum.add(x);
          return sum;
        }
      }
      (async () => {
        const trainer = new Trainer({ model: new Sums(), config: { numThreads: 1, progressBar: false } });
        const inputs = new Float32Array(4 << 20).map((_, i) => i % 7);
        await trainer.predict(inputs.subarray(0, 1024), [1, 1, 1024]);
        const before = process.resourceUsage().maxRSS / 1024;
        const { data } = await trainer.predict(inputs, [4, 1024, 1024], { batchSize: 4 });
        const wrong = data.findIndex((value, i) => value !== 33 * (i % 7));
        console.log(JSON.stringify({ grown: process.resourceUsage().maxRSS / 1024 - before, wrong }));
      })();`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(result.status, result.stderr).to.equal(0);
    const measured = JSON.parse(result.stdout.trim().split('\n').pop() as string) as Record<string, number>;
    expect(measured.wrong, 'the first element off 33 x the input').to.equal(-1);
    // The input's copy, two sums at a time and the output's copy to JS: 64 MB, and 128 MB allows for more.
    expect(measured.grown, JSON.stringify(measured)).to.be.below(128);
  });

  it('hands a freed block to a smaller request: a forward of many sizes, few live at once, faults nothing in again', () => {
    // Widths 640 to 1,152 at batch 4,096: values of 10 to 18 MB, eight sizes, two or three live at once (each is
    // dropped once read). Kept only for their own size, one block of each was past twice the peak of live
    // bytes, and every call gave blocks back and faulted them in again.
    const widths = [512, 1152, 640, 1024, 768, 896, 704, 960, 832, 16];
    const layers = widths.slice(1).map((width, i) => `nn.linear(${widths[i]}, ${width}), nn.relu()`);
    const faults = predictFaults(`nn.sequential(${layers.join(', ')})`, [4096, 512], 4);
    // The first call faults in ~40 MB (10,000 pages) at least. A block given back and made again is 10 MB (2,560
    // pages) or more: each later call faults in less than that (kept for their own size only: 8,271 and 8,516).
    expect(faults[0], 'the first call faults its values in').to.be.above(10000);
    expect(Math.max(...faults.slice(1)), JSON.stringify(faults)).to.be.below(2048);
  });

  it("backs a model's weights with huge pages when it generates (decoding streams them every token)", function () {
    const [major, minor] = os.release().split('.').map(Number);
    const thp = '/sys/kernel/mm/transparent_hugepage/enabled';
    const setting = fs.existsSync(thp) ? fs.readFileSync(thp, 'utf8') : '[never]';
    if (major < 6 || (major === 6 && minor < 1) || setting.includes('[never]')) {
      console.log(
        `      skipped: needs Linux 6.1's MADV_COLLAPSE and huge pages allowed; ${os.release()}, ${setting.trim()}`,
      );
      this.skip();
    }
    // A 16 MB tied embedding and four layers of 2.6 MB, each of its tensors under 2 MB but the embedding.
    const script = `
      const fs = require('node:fs');
      const { LlamaForCausalLM, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
      const hugeMb = () => Number(/AnonHugePages:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/smaps_rollup', 'utf8'))[1]) / 1024;
      (async () => {
        const model = new LlamaForCausalLM({
          vocab_size: 16384, hidden_size: 256, intermediate_size: 512, num_hidden_layers: 4,
          num_attention_heads: 4, num_key_value_heads: 4, max_position_embeddings: 64, tie_word_embeddings: true,
        });
        const trainer = new Trainer({ model, loss: 'cross_entropy', optimizer: 'sgd', config: { numThreads: 1, progressBar: false } });
        const before = hugeMb();
        const tokens = [];
        for await (const token of trainer.generate([1, 2, 3], { maxNewTokens: 4, greedy: true, stopTokens: [] })) tokens.push(token);
        console.log(JSON.stringify({ before, after: hugeMb(), tokens: tokens.length }));
      })();`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(result.status, result.stderr).to.equal(0);
    const measured = JSON.parse(result.stdout.trim().split('\n').pop() as string) as Record<string, number>;
    expect(measured.tokens).to.equal(4);
    // More than the embedding's 16 MB, all that huge pages per tensor could give: the regions of the
    // layers' tensors under 2 MB were collapsed too (26-28 MB on a quiet machine; a region the kernel
    // finds no free huge page for stays as it was, as on a busy CI machine: 22 MB).
    expect(measured.after - measured.before, JSON.stringify(measured)).to.be.above(16);
  });

  it("leaves malloc as the process set it: glibc's default thresholds fault every step's activations in", () => {
    expect(measure(mlp, { GLIBC_TUNABLES: glibcDefaults }).faultsPerStep).to.be.above(100);
  });

  it("keeps blocks past glibc's largest threshold for the next step, and gives them back when the fit ends", () => {
    // Unkept, each step would fault its three 64 MB blocks in again: 3 x 16384 pages.
    for (const env of [{}, { GLIBC_TUNABLES: glibcDefaults }]) {
      const measured = measure(wideHead, env);
      expect(measured.faultsPerStep, JSON.stringify(env)).to.be.below(1000);
      // At the last batch's end the freed logits wait in the cache; after the fit they are gone.
      expect(measured.rssAfterFit, JSON.stringify(measured)).to.be.below(measured.rssAtLastBatch - 128);
    }
  });
});
