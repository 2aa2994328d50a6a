// Host memory between steps: freed activations stay in malloc's heaps for the
// next step instead of going back to the kernel and being faulted in again.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

// Minor page faults per step of a 784-256-256-10 MLP (batch 128, Adam) in a fresh process.
function faultsPerStep(env: NodeJS.ProcessEnv): number {
  const script = `
    const { Dataset, nn, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
    (async () => {
      const samples = 128 * 20;
      const data = Dataset.fromArrays({
        inputs: new Float32Array(samples * 784).map((_, i) => Math.sin(i)), inputShape: [samples, 784],
        targets: new Int32Array(samples).map((_, i) => i % 10),
      });
      const trainer = new Trainer({
        model: nn.sequential(nn.linear(784, 256), nn.relu(), nn.linear(256, 256), nn.relu(), nn.linear(256, 10)),
        loss: 'cross_entropy', optimizer: 'adam', config: { batchSize: 128, numThreads: 1, progressBar: false },
      });
      await trainer.fit(data, { numEpochs: 1 });
      const before = process.resourceUsage().minorPageFault;
      const history = await trainer.fit(data, { numEpochs: 2 });
      const steps = history.epochs.reduce((sum, epoch) => sum + epoch.steps, 0);
      console.log(JSON.stringify({ faultsPerStep: (process.resourceUsage().minorPageFault - before) / steps }));
    })();`;
  const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, ...env } });
  expect(result.status, result.stderr).to.equal(0);
  return (JSON.parse(result.stdout.trim().split('\n').pop() as string) as { faultsPerStep: number }).faultsPerStep;
}

describe('host memory', () => {
  before(function () {
    if (process.platform !== 'linux') {
      console.log(`      skipped: malloc settings are glibc's, and this is ${process.platform}`);
      this.skip();
    }
  });

  it('keeps freed activations for the next step: few page faults per step', () => {
    expect(faultsPerStep({})).to.be.below(50);
  });

  it("leaves malloc as the process set it: glibc's default thresholds fault every step's activations in", () => {
    const glibcDefaults = 'glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072';
    expect(faultsPerStep({ GLIBC_TUNABLES: glibcDefaults })).to.be.above(100);
  });
});
