// A tabular classifier trained from a raw CSV file and served over HTTP, taking JSON records.
//   npm run build:ts && node dist/examples/tabular-http.js   (from the repository root; EXAMPLE_EPOCHS, default 60)
// examples/data/passengers.csv is what real files are (scripts/make-table-fixtures.py wrote it): a BOM,
// CRLF line ends, quoted names with commas, empty cells, text columns. The preprocessing is fitted on the
// training rows only, saved with the model, and applied by the served model to each request's records,
// fields missing or not. Expect a validation accuracy near 0.8.
// In your project, import from 'firebrand' instead of '../src'.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { Dataset, Model, nn, readCsv, TablePreprocessor, Trainer, type TableRecord } from '../src';
import { exampleSize } from './shared/example-size';

/**
 * A service: POST a JSON array of records (extra fields such as request ids left out), get each one's
 * predicted label and its probability.
 */
function serve(model: Model): http.Server {
  return http.createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    try {
      const ranked = await model.predictLabels(JSON.parse(body) as TableRecord[], { topK: 1, extraFields: 'ignore' });
      const answers = ranked.map(([best]) => best);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers));
    } catch (error) {
      const { code, message } = error as Error & { code?: string };
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ code, message }));
    }
  });
}

async function main(): Promise<void> {
  const table = await readCsv(path.resolve('examples', 'data', 'passengers.csv'));
  const { train, validation } = table.split({ validation: 0.2, seed: 0, stratify: 'survived' });
  const preprocessor = new TablePreprocessor({
    numeric: { columns: ['age', 'fare'], impute: 'median', indicator: true, scale: 'standard' },
    categorical: { columns: ['sex', 'port', 'class'], impute: 'most_frequent', handleUnknown: 'ignore' },
    target: 'survived',
  }).fit(train);
  const features = preprocessor.featureNames.input.length;
  const trainer = new Trainer({
    model: nn.sequential(nn.linear(features, 16), nn.relu(), nn.linear(16, 2)),
    loss: 'cross_entropy',
    optimizer: { name: 'adam', lr: 0.01 },
    config: { numEpochs: exampleSize('EXAMPLE_EPOCHS', 60), batchSize: 32, progressBar: false },
  });
  const history = await trainer.fit(Dataset.fromTable(train, preprocessor), {
    evalData: Dataset.fromTable(validation, preprocessor),
  });
  console.log(`validation accuracy ${history.epochs.at(-1)?.valAccuracy?.toFixed(3)} on ${validation.numRows} rows`);

  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'passenger-model-'));
  await trainer.save(folder);
  const server = serve(await Model.load(folder));
  try {
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const { port } = server.address() as AddressInfo;
    const records = [
      { requestId: 'a1', age: 8, fare: 30, sex: 'female', port: 'S', class: 1 },
      { requestId: 'a2', sex: 'male', class: 3, port: 'Z' }, // no age or fare (imputed), a port never seen (ignored)
    ];
    const reply = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: JSON.stringify(records) });
    console.log(`POST ${JSON.stringify(records)} -> ${reply.status} ${await reply.text()}`);
  } finally {
    server.close();
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
