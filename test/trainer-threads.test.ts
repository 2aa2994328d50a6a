// Each Trainer runs its native work on a thread of its own: one per trainer
// that has run something, ended when the trainer is garbage-collected.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

describe('trainer threads', () => {
  before(function () {
    if (process.platform !== 'linux') {
      console.log(`      skipped: counts threads in /proc/self/status, which ${process.platform} has not`);
      this.skip();
    }
  });

  it('gives each trainer one thread and ends it when the trainer is collected', () => {
    const script = `
      const fs = require('node:fs');
      const { Dataset, nn, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
      const threads = () => Number(/Threads:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
      const collect = async () => {
        for (let i = 0; i < 5; i++) { global.gc(); await new Promise((resolve) => setTimeout(resolve, 10)); }
      };
      (async () => {
        const data = Dataset.fromArrays({ inputs: new Float32Array(64 * 4), inputShape: [64, 4], targets: new Float32Array(64) });
        const make = () => new Trainer({ model: nn.sequential(nn.linear(4, 1)), loss: 'mse', optimizer: 'sgd',
                                         config: { batchSize: 16, numThreads: 1, progressBar: false } });
        await make().fit(data, { numEpochs: 1 });  // libtorch's and libuv's own threads start here
        await collect();
        const baseline = threads();
        let trainers = [];
        for (let i = 0; i < 8; i++) {
          const trainer = make();
          await trainer.fit(data, { numEpochs: 1 });
          await trainer.evaluate(data);
          trainers.push(trainer);
        }
        const running = threads();
        trainers = [];
        await collect();
        console.log(JSON.stringify({ baseline, running, collected: threads() }));
      })();`;
    const result = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
    expect(result.status, result.stderr).to.equal(0);
    const counts = JSON.parse(result.stdout.trim().split('\n').pop() as string) as Record<string, number>;
    expect(counts.running - counts.baseline).to.equal(8);
    expect(counts.collected).to.be.at.most(counts.baseline + 1);
  });
});
