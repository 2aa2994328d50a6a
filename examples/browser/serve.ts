// Train in Node, ship to the browser: a Fashion-MNIST CNN trained here, exported
// with its preprocessing folded in (exportOnnx includePreprocessing), and this
// folder's static page serving it with onnxruntime-web.
//   npm run build:ts && node dist/examples/browser/serve.js   (then open the printed URL)
//   (apt-get install dataset-fashion-mnist; EXAMPLE_EPOCHS, default 1; PORT, default 8080)
// In your project, import from 'firebrand' instead of '../../src'.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { Dataset, encodePng, nn, Trainer } from '../../src';
import { exampleSize } from '../shared/example-size';

const root = path.join(__dirname, '..', '..', '..');
const page = path.join(root, 'examples', 'browser');
// onnxruntime-web's entry point is in its dist/ folder, beside the .wasm files the page loads.
const ortDist = path.dirname(require.resolve('onnxruntime-web'));
const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.png': 'image/png',
};

/** The page, onnxruntime-web's files under ort/, and the files of `served` (model.onnx, sample.png). */
export async function servePage(served: string, port = 0): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    const name = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname).replace(/^\/+/, '');
    const [folder, file] = name.startsWith('ort/')
      ? [ortDist, name.slice(4)]
      : fs.existsSync(path.join(served, name)) && name !== ''
        ? [served, name]
        : [page, name === '' ? 'index.html' : name];
    const full = path.resolve(folder, file);
    if (!full.startsWith(path.resolve(folder) + path.sep) || !fs.existsSync(full) || fs.statSync(full).isDirectory()) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': TYPES[path.extname(full)] ?? 'application/octet-stream' });
    fs.createReadStream(full).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Trains the CNN on Fashion-MNIST and writes model.onnx and sample.png (the first test image) to `folder`. */
export async function trainAndExport(
  folder: string,
  dataDir: string,
  epochs: number,
  samples?: number,
): Promise<Trainer> {
  const file = (name: string) => path.join(dataDir, name);
  const pixels = { mean: 0.286, std: 0.353, sampleShape: [1, 28, 28] };
  const train = await Dataset.fromIdx(file('train-images-idx3-ubyte.gz'), file('train-labels-idx1-ubyte.gz'), pixels);
  const test = await Dataset.fromIdx(file('t10k-images-idx3-ubyte.gz'), file('t10k-labels-idx1-ubyte.gz'), pixels);
  const trainer = new Trainer({
    model: nn.sequential(
      nn.conv2d(1, 16, 3, { padding: 1 }),
      nn.relu(),
      nn.maxPool2d(2),
      nn.conv2d(16, 32, 3, { padding: 1 }),
      nn.relu(),
      nn.maxPool2d(2),
      nn.flatten(),
      nn.linear(32 * 7 * 7, 64),
      nn.relu(),
      nn.linear(64, 10),
    ),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 2e-3 },
    config: { numEpochs: epochs, batchSize: 128, progressBar: false, seed: 0 },
  });
  const history = await trainer.fit(samples === undefined ? train : train.slice(0, samples), {
    evalData: test.slice(0, 2000),
  });
  console.log(`test accuracy ${history.epochs.at(-1)?.valAccuracy?.toFixed(4)} (2,000 test images)`);
  await trainer.exportOnnx(path.join(folder, 'model.onnx'), { includePreprocessing: true });
  // The first test image as Fashion-MNIST stores it: undo fromIdx's scaling and normalization.
  const first = test.slice(0, 1).fields().input;
  const raw = Uint8Array.from(first.data as Float32Array, (value) => Math.round((value * 0.353 + 0.286) * 255));
  fs.writeFileSync(path.join(folder, 'sample.png'), await encodePng({ data: raw, shape: [1, 28, 28] }));
  return trainer;
}

async function main(): Promise<void> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-browser-'));
  const dataDir = process.env.FASHION_MNIST_DIR ?? '/usr/share/datasets/fashion-mnist';
  await trainAndExport(folder, dataDir, exampleSize('EXAMPLE_EPOCHS', 1));
  const { url } = await servePage(folder, Number(process.env.PORT ?? 8080));
  console.log(`open ${url} (or ${url}?image=sample.png); Ctrl-C stops`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
