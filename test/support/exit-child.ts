// Node leaving while native threads work (node dist/test/support/exit-child.js <where>): a fit runs with a
// per-batch hook and a loaded model predicts, and process.exit(7) is called from a timer ('timer'), from
// inside the per-batch hook ('hook'), or from a timer while two loader workers cut batches ('workers'), mid-epoch. The process must end with status 7: no thread may call into
// Node, or run on, once it goes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Model, Trainer } from '../../src';
import { blobDataset, blobTrainer } from './helpers';

async function main(): Promise<void> {
  const where = process.argv[2];
  let steps = 0;
  const trainer: Trainer = blobTrainer(
    { numEpochs: 1000, batchSize: 4, ...(where === 'workers' ? { numWorkers: 2 } : {}) },
    {
      callbacks: [
        {
          onBatchEnd: async () => {
            steps += 1;
            if (where === 'hook' && steps === 40) process.exit(7);
            await new Promise((resolve) => setImmediate(resolve));
          },
        },
      ],
    },
  );
  // In the test run's TMPDIR (test/support/setup.ts), which goes when the run ends.
  const saved = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-exit-')), 'model');
  await trainer.save(saved);
  const model = await Model.load(saved);
  const probe = new Float32Array(4 * 64);
  const predicting = (async () => {
    for (;;) await model.predict(probe, [64, 4]);
  })();
  if (where === 'timer' || where === 'workers') setTimeout(() => process.exit(7), 300);
  await Promise.race([trainer.fit(blobDataset(4000)), predicting]);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
