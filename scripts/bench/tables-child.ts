// One side of scripts/bench/tables.ts in a process of its own: firebrand reads
// a Parquet file (read-parquet FILE) or trains a table end to end (train-table
// CSV); prints one JSON line of its seconds and peak RSS.
import { Dataset, nn, readCsv, Table, TablePreprocessor, Trainer } from '../../src';

const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

async function readParquet(file: string): Promise<void> {
  const started = performance.now();
  const table = await Table.fromParquet(file);
  const seconds = (performance.now() - started) / 1000;
  console.log(JSON.stringify({ seconds, peakRssMb: peakRssMb(), rows: table.numRows }));
}

/** The first 480 rows train, the last 120 validate: the split tables_bench.py takes too. */
async function trainTable(csv: string): Promise<void> {
  const started = performance.now();
  const table = await readCsv(csv);
  const rows = (start: number, end: number) => Array.from({ length: end - start }, (_, i) => start + i);
  const [train, validation] = [table.rows(rows(0, 480)), table.rows(rows(480, table.numRows))];
  const preprocessor = new TablePreprocessor({
    numeric: { columns: ['age', 'fare'], impute: 'median', indicator: true, scale: 'standard' },
    categorical: { columns: ['sex', 'port', 'class'], impute: 'most_frequent', handleUnknown: 'ignore' },
    target: 'survived',
  }).fit(train);
  const trainer = new Trainer({
    model: nn.sequential(nn.linear(preprocessor.featureNames.input.length, 16), nn.relu(), nn.linear(16, 2)),
    loss: 'cross_entropy',
    optimizer: { name: 'adam', lr: 0.01 },
    config: { numEpochs: 60, batchSize: 32, progressBar: false, numThreads: 1, loggers: [], seed: 0 },
  });
  await trainer.fit(Dataset.fromTable(train, preprocessor));
  const labels = await trainer.model.predictLabels(validation.toRecords(), { extraFields: 'ignore' });
  const truth = validation.textsOf('survived');
  const accuracy = labels.filter((label, i) => String(label) === truth[i]).length / labels.length;
  const seconds = (performance.now() - started) / 1000;
  console.log(JSON.stringify({ seconds, peakRssMb: peakRssMb(), accuracy }));
}

const [mode, file] = process.argv.slice(2);
(mode === 'read-parquet' ? readParquet(file) : trainTable(file)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
