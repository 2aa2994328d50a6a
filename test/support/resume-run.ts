// The training job of the checkpoint tests, shared by the test process and
// the child process it kills (test/support/resume-child.ts).
import { Dataset, nn, Trainer, TrainerConfig, transforms } from '../../src';
import type { Callback } from '../../src';
import { makeBlobs } from './helpers';

export const RESUME_EPOCHS = 3;

/** Blob samples (default 200: 13 shuffled batches of 16 per epoch), normalized in the loader. */
export function resumeData(samples = 200): Dataset {
  const { inputs, labels } = makeBlobs(samples, 4, 11);
  return Dataset.fromArrays({ inputs, inputShape: [samples, 4], targets: labels }).withTransforms(
    transforms.normalize({ mean: 0.1, std: 1.3 }),
  );
}

/** Dropout, shuffling, Adam, a cosine schedule and loss scaling: every piece of state a resume must restore. */
export function resumeTrainer(config: Partial<TrainerConfig> = {}, callbacks: Callback[] = []): Trainer {
  return new Trainer({
    model: nn.sequential(nn.linear(4, 16), nn.relu(), nn.dropout(0.3), nn.linear(16, 2)),
    loss: 'cross_entropy',
    optimizer: { name: 'adam', lr: 0.02 },
    lrScheduler: { name: 'cosine', warmupSteps: 3 },
    config: {
      numEpochs: RESUME_EPOCHS,
      batchSize: 16,
      seed: 9,
      numThreads: 1,
      progressBar: false,
      logEvery: 1,
      gradScaler: { enabled: true, initScale: 256, growthInterval: 5 },
      ...config,
    },
    callbacks,
  });
}
