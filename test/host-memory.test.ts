// Host memory between steps: freed activations stay in malloc's heaps, or in
// firebrand's cache of large blocks, for the next step instead of going back
// to the kernel and being faulted in again; the cache goes back when the fit ends.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

interface Measured {
  /**
   * Minor page faults per step of the second fit, between steps of one epoch (an epoch's first step may
   * fault in what the cache gave back when the previous epoch ended).
   */
  faultsPerStep: number;
  /** Resident MB at the last batch's end, and after the fit returned. */
  rssAtLastBatch: number;
  rssAfterFit: number;
}

/**
 * A fresh process fits a classifier twice (`features` inputs, `classes` outputs, batch `batch`, Adam)
 * and measures the second fit.
 */
function measure(
  layers: { features: number; hidden: number[]; classes: number; batch: number },
  env: NodeJS.ProcessEnv,
): Measured {
  const script = `
    const { Dataset, nn, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
    (async () => {
      const { features, hidden, classes, batch } = ${JSON.stringify(layers)};
      const samples = batch * 6;
      const data = Dataset.fromArrays({
        inputs: new Float32Array(samples * features).map((_, i) => Math.sin(i)), inputShape: [samples, features],
        targets: new Int32Array(samples).map((_, i) => i % classes),
      });
      const widths = [features, ...hidden, classes];
      const model = nn.sequential(...widths.slice(1).flatMap((width, i) =>
        i + 2 < widths.length ? [nn.linear(widths[i], width), nn.relu()] : [nn.linear(widths[i], width)]));
      const mb = () => process.memoryUsage().rss / 2 ** 20;
      let rssAtLastBatch = 0;
      let measuring = false;
      const ends = [];
      const trainer = new Trainer({
        model, loss: 'cross_entropy', optimizer: 'adam',
        config: { batchSize: batch, numThreads: 1, progressBar: false },
        callbacks: {
          postTrainBatch: ({ epoch }) => {
            rssAtLastBatch = mb();
            if (measuring) ends.push({ epoch, faults: process.resourceUsage().minorPageFault });
          },
        },
      });
      await trainer.fit(data, { numEpochs: 1 });
      measuring = true;
      await trainer.fit(data, { numEpochs: 2 });
      const steps = ends.slice(1).filter((end, i) => end.epoch === ends[i].epoch);
      const faults = ends.slice(1).reduce((sum, end, i) => sum + (end.epoch === ends[i].epoch ? end.faults - ends[i].faults : 0), 0);
      const faultsPerStep = faults / steps.length;
      console.log(JSON.stringify({ faultsPerStep, rssAtLastBatch, rssAfterFit: mb() }));
    })();`;
  const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, ...env } });
  expect(result.status, result.stderr).to.equal(0);
  return JSON.parse(result.stdout.trim().split('\n').pop() as string) as Measured;
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
