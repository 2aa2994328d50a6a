// Trains with the default progress output on stdout, for progress-bar.test.ts
// to run under a pseudo-terminal of a given width: two parameter groups at
// different rates, stopped by maxSteps.
import { blobDataset, blobTrainer } from './helpers';

async function main(): Promise<void> {
  const trainer = blobTrainer(
    { numEpochs: 3, maxSteps: 20, progressBar: true, logEvery: 4 },
    { optimizer: { name: 'sgd', lr: 0.1, paramGroups: [{ params: ['0.'], lr: 0.001 }] } },
  );
  await trainer.fit(blobDataset(256), { evalData: blobDataset(64, 4, 9) });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
