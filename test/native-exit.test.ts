// Node exits while a trainer's and a model's native threads work: process.exit() from a timer or from a
// per-batch hook, mid-epoch (with the data loader's worker threads too), ends the process with its status, never an abort (a native thread released a
// thread-safe function while exit handlers ran: 3 of 24 runs, before the threads were stopped and joined).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

// How many exits of each kind; the abort was intermittent.
const RUNS = Number(process.env.FIREBRAND_TEST_EXIT_RUNS ?? 4);

describe('native threads at process exit', function () {
  this.timeout(600_000);

  const cases: Record<string, string> = {
    timer: 'a timer',
    hook: 'a per-batch hook',
    workers: 'a timer while loader workers cut batches',
  };
  for (const [where, from] of Object.entries(cases)) {
    it(`process.exit() from ${from} mid-epoch ends with its status, ${RUNS} times`, () => {
      for (let run = 0; run < RUNS; run++) {
        const child = spawnSync(process.execPath, [path.join(__dirname, 'support', 'exit-child.js'), where], {
          encoding: 'utf8',
          timeout: 120_000,
        });
        expect({ status: child.status, signal: child.signal }, `run ${run}: ${child.stderr}`).to.deep.equal({
          status: 7,
          signal: null,
        });
      }
    });
  }
});
