// Each Trainer (and each inference Model) runs its native work on a thread of
// its own: one per trainer that has run something, ended when the trainer is
// garbage-collected, and libuv's pool stays free for the process's own fs,
// dns and crypto work.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * Runs `setup` (which starts `work`, a promise, and may define `release()`) in a fresh process with
 * one libuv pool thread, then makes a file stat and says which settled first: were the work on the
 * pool, the stat would queue behind it. A stat still waiting after a minute (a safety net, never
 * reached when the work is off the pool) counts as queued.
 */
function statDuringWork(setup: string): { order: string[] } {
  const script = `
    const fs = require('node:fs');
    const os = require('node:os');
    const path = require('node:path');
    const { Dataset, Model, nn, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
    (async () => {
      let release = () => {};
      ${setup}
      const order = [];
      const workDone = work.then(() => order.push('work'));
      const queued = setTimeout(() => { order.push('stat still queued'); release(); }, 60000);
      await fs.promises.stat(process.execPath);
      order.push('stat');
      clearTimeout(queued);
      release();
      await workDone;
      console.log(JSON.stringify({ order }));
    })();`;
  const result = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
  });
  expect(result.status, result.stderr).to.equal(0);
  return JSON.parse(result.stdout.trim().split('\n').pop() as string) as { order: string[] };
}

/**
 * The start of a child script about kernel threads: `named()` counts the process's threads named 'firebrand'
 * (trainer threads, and the kernel threads they start, which take the name), and `data`, `width` are a
 * 128 x 512 regression whose 64 x 512 x 512 products and AdamW steps split over the threads.
 */
const KERNEL_THREADS_SETUP = `
  const fs = require('node:fs');
  const { Dataset, nn, runtimeInfo, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
  const named = () => fs.readdirSync('/proc/self/task').filter((tid) => {
    try { return fs.readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim() === 'firebrand'; } catch { return false; }
  }).length;
  const rows = 128, width = 512;
  const data = Dataset.fromArrays({ inputs: new Float32Array(rows * width).fill(0.5), inputShape: [rows, width],
                                    targets: new Float32Array(rows * width), targetShape: [rows, width] });`;

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

  it("keeps a trainer's kernel threads while it is idle, and ends them when another trainer's task starts", () => {
    // libgomp spins at a fork-join only while the process holds no more kernel threads than cores: an idle
    // thread's would make every other's fork-joins sleep and wake, so they end when another task starts.
    // Alone, an idle thread keeps them asleep for its next call (ended after 200 ms idle, a model called
    // less often started them again at every call). Trainer threads are named 'firebrand', and the kernel
    // threads they start take the name.
    const script = `
      ${KERNEL_THREADS_SETUP}
      (async () => {
        const during = [];
        // A 64 x 512 x 512 product and a fused AdamW step over 262,144 weights: both split over the threads.
        const trainer = new Trainer({ model: nn.sequential(nn.linear(width, width)), loss: 'mse', optimizer: 'adamw',
                                      callbacks: [{ postTrainBatch: () => void during.push(named()) }],
                                      config: { batchSize: 64, numThreads: 2, progressBar: false } });
        await trainer.fit(data, { numEpochs: 1 });
        await new Promise((resolve) => setTimeout(resolve, 500));
        const idle = named();
        const handOffs = runtimeInfo().kernelThreadHandOffs;
        // Held by the global object: collected, its thread would end before the count.
        const other = globalThis.other = new Trainer({ model: nn.sequential(nn.linear(4, 1)), config: { numThreads: 1, progressBar: false } });
        await other.predict(new Float32Array(4), [1, 4]);
        // The other's thread adds one; a's kernel threads end (asynchronously) once asked.
        const until = Date.now() + 60000;  // a safety net, not a verdict on speed
        while (named() > idle && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
        console.log(JSON.stringify({ during, idle, handOffs: runtimeInfo().kernelThreadHandOffs - handOffs, after: named() }));
      })();`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(result.status, result.stderr).to.equal(0);
    const counts = JSON.parse(result.stdout.trim().split('\n').pop() as string) as {
      during: number[];
      idle: number;
      handOffs: number;
      after: number;
    };
    // While it trains: the trainer's thread, the kernel threads it started (numThreads 2), and whatever
    // libtorch keeps asleep for itself (its pthreadpool, on some versions). Idle, all of them stay; once the
    // other trainer's task starts, a's kernel threads end (the other's own thread taking one's place).
    expect(counts.during).to.have.length(2);
    expect(counts.during[1]).to.equal(counts.during[0]);
    expect(counts.idle).to.equal(counts.during[0]);
    expect(counts.handOffs).to.equal(1);
    expect(counts.after).to.be.at.most(counts.idle);
  });

  it("ends a trainer's kernel threads while it waits on a hook that awaits another trainer's task", () => {
    // Two pools beside each other would make every fork-join sleep and wake: a task that starts asks the
    // other task threads to end theirs once idle or parked. Trainer a's last batch hook makes trainer b and
    // awaits its predict; parked there, a's thread can end its kernel threads only because b asked.
    const script = `
      ${KERNEL_THREADS_SETUP}
      (async () => {
        const seen = {};
        let batches = 0;
        const a = new Trainer({ model: nn.sequential(nn.linear(width, width)), loss: 'mse', optimizer: 'adamw',
                                callbacks: [{ postTrainBatch: async () => {
                                  if (++batches < 2) return;
                                  const handOffs = runtimeInfo().kernelThreadHandOffs;
                                  const b = new Trainer({ model: nn.sequential(nn.linear(4, 1)), config: { progressBar: false } });
                                  await b.predict(new Float32Array(4), [1, 4]);
                                  const until = Date.now() + 60000;  // a safety net, not a verdict on speed
                                  while (runtimeInfo().kernelThreadHandOffs === handOffs && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
                                  seen.handOffs = runtimeInfo().kernelThreadHandOffs - handOffs;
                                } }],
                                config: { batchSize: 64, numThreads: 2, progressBar: false } });
        await a.fit(data, { numEpochs: 1 });
        console.log(JSON.stringify(seen));
      })();`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(result.status, result.stderr).to.equal(0);
    const seen = JSON.parse(result.stdout.trim().split('\n').pop() as string) as Record<string, number>;
    // While a waits on its hook it starts no task, and b's thread starts there: only a can have been asked
    // (by b's tasks), and a's thread ended its kernel threads (numThreads 2) once, parked.
    expect(seen.handOffs).to.equal(1);
  });

  it("leaves libuv's pool free while fits run: a file stat does not wait for an epoch", () => {
    // Two trainers whose epochs are held mid-way (a batch hook waits for release) until the stat is done.
    const { order } = statDuringWork(`
      const data = Dataset.fromArrays({ inputs: new Float32Array(64 * 4), inputShape: [64, 4], targets: new Float32Array(64) });
      const held = new Promise((resolve) => { release = resolve; });
      let started;
      const bothStarted = new Promise((resolve) => { let count = 0; started = () => { if (++count === 2) resolve(); }; });
      const make = () => new Trainer({ model: nn.sequential(nn.linear(4, 1)), loss: 'mse', optimizer: 'sgd',
                                       callbacks: [{ postTrainBatch: ({ batch }) => { if (batch === 0) { started(); return held; } } }],
                                       config: { batchSize: 16, numThreads: 1, progressBar: false } });
      const work = Promise.all([make(), make()].map((trainer) => trainer.fit(data, { numEpochs: 1 })));
      await bothStarted;`);
    expect(order).to.deep.equal(['stat', 'work']);
  });

  it("runs a Model's predictions off libuv's pool: a file stat does not wait for them", () => {
    // Two models predicting.
    const { order } = statDuringWork(`
      const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-model-thread-'));
      const trainer = new Trainer({ model: nn.sequential(nn.linear(64, 1024), nn.relu(), nn.linear(1024, 1)), loss: 'mse',
                                    optimizer: 'sgd', config: { numThreads: 1, progressBar: false } });
      await trainer.fit(Dataset.fromArrays({ inputs: new Float32Array(32 * 64), inputShape: [32, 64], targets: new Float32Array(32) }));
      await trainer.save(folder);
      const models = [await Model.load(folder), await Model.load(folder)];
      fs.rmSync(folder, { recursive: true, force: true });
      const rows = 200000;
      const work = Promise.all(models.map((model) => model.predict(new Float32Array(rows * 64), [rows, 64])));`);
    // Predictions of 200,000 rows take a thousand times a stat's microseconds: an order, not a time.
    expect(order).to.deep.equal(['stat', 'work']);
  });
});
