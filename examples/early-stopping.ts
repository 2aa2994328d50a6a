// Early stopping with the best checkpoint: train until the validation loss
// stops improving, keep the best two models on disk, and end with the best
// weights loaded. Data: two interleaved spirals, made here.
//   npm run build:ts && node dist/examples/early-stopping.js   (EXAMPLE_EPOCHS: the most epochs, default 200)
// In your project, import from 'firebrand' instead of '../src'.
import os from 'node:os';
import path from 'node:path';

import { Dataset, EarlyStopping, Model, ModelCheckpoint, nn, Trainer } from '../src';
import { exampleSize } from './shared/example-size';
import { seededRandom } from './shared/seeded-random';

function spirals(samples: number, seed: number): Dataset {
  const random = seededRandom(seed);
  const inputs = new Float32Array(samples * 2);
  const labels = new Int32Array(samples);
  for (let i = 0; i < samples; i++) {
    const label = i % 2;
    const t = random() * 3 * Math.PI;
    const radius = t / (3 * Math.PI);
    const angle = t + label * Math.PI;
    inputs[2 * i] = radius * Math.cos(angle) + (random() - 0.5) * 0.08;
    inputs[2 * i + 1] = radius * Math.sin(angle) + (random() - 0.5) * 0.08;
    labels[i] = label;
  }
  return Dataset.fromArrays({ inputs, inputShape: [samples, 2], targets: labels });
}

async function main(): Promise<void> {
  const dirpath = path.join(os.tmpdir(), 'firebrand-spirals');
  const stopping = new EarlyStopping({ monitor: 'valLoss', patience: 5, minDelta: 1e-4, restoreBestWeights: true });
  const best = new ModelCheckpoint({
    dirpath,
    monitor: 'valAccuracy',
    saveTopK: 2,
    filename: 'epoch={epoch}-acc={valAccuracy:.3f}',
  });
  const trainer = new Trainer({
    model: nn.sequential(nn.linear(2, 64), nn.tanh(), nn.linear(64, 64), nn.tanh(), nn.linear(64, 2)),
    loss: 'cross_entropy',
    optimizer: { name: 'adam', lr: 0.01 },
    config: { numEpochs: exampleSize('EXAMPLE_EPOCHS', 200), batchSize: 64, progressBar: false },
    callbacks: [stopping, best],
  });
  const history = await trainer.fit(spirals(2000, 1), { evalData: spirals(500, 2) });
  console.log(
    `stopped after ${history.epochs.length} epochs (best epoch ${(stopping.bestEpoch ?? 0) + 1}); ` +
      `best checkpoint ${best.bestModelPath} with validation accuracy ${best.bestScore?.toFixed(3)}`,
  );
  const restored = await trainer.evaluate(spirals(500, 2));
  const model = await Model.load(best.bestModelPath as string);
  console.log(
    `restored weights: validation loss ${restored.loss.toFixed(4)}; best checkpoint loads with ${model.parameterCount} parameters`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
