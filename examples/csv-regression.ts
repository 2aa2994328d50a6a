// Regression from a CSV file: house prices from four numeric columns.
//   npm run build:ts && node dist/examples/csv-regression.js   (from the repository root; EXAMPLE_EPOCHS, default 60)
// The same run as one JSON file: npx firebrand train examples/csv-regression.run.json
// In your project, import from 'firebrand' instead of '../src'.
import path from 'node:path';

import { Dataset, nn, transforms, Trainer } from '../src';
import { exampleSize } from './shared/example-size';

// Column means and standard deviations of data/houses.csv's inputs: area, rooms, age, distance.
const MEAN = [116.3, 3.4, 40.0, 15.0];
const STD = [49.3, 1.7, 23.9, 8.5];

async function main(): Promise<void> {
  const table = await Dataset.fromCsv(path.resolve('examples', 'data', 'houses.csv'), {
    labelColumn: 'price_k',
    targets: 'value',
  });
  const [train, test] = table
    .withTransforms(transforms.normalize({ mean: MEAN, std: STD }))
    .split({ validation: 0.2, seed: 1 });
  const trainer = new Trainer({
    model: nn.sequential(nn.linear(4, 32), nn.relu(), nn.linear(32, 1)),
    loss: 'mse',
    optimizer: { name: 'adam', lr: 0.05 },
    config: { numEpochs: exampleSize('EXAMPLE_EPOCHS', 60), batchSize: 32, metrics: ['mae', 'r2'], progressBar: false },
  });
  const history = await trainer.fit(train, { evalData: test });
  const last = history.epochs[history.epochs.length - 1];
  console.log(
    `test mae ${last.valMae?.toFixed(2)}k, r2 ${last.valR2?.toFixed(4)} after ${history.epochs.length} epochs`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
