// Saved models as firebrand 0.1.0 wrote them before parameterless layers became
// modules (commit d5f4b09): every such layer type in an nn.sequential spec and
// as fields of a TypeScript module, with the predictions Model.load gave then.
// The folders are committed as written and never regenerated; test/saved-model
// loads them to show old saved models still load and predict the same.
//   node dist/scripts/make-saved-model-fixtures.js <output folder>
import fs from 'node:fs';
import path from 'node:path';

import { Dataset, F, Model, Module, nn, Tensor, Trainer } from '../src';
import { seededRandom } from '../examples/shared/seeded-random';

const imageLayers = () => [
  nn.conv2d(2, 4, 3, { padding: 1 }),
  nn.relu6(),
  nn.dropout2d(0.1),
  nn.maxPool2d(2),
  nn.upsample({ scaleFactor: 2 }),
  nn.upsample({ size: [8, 8], mode: 'bilinear', alignCorners: true }),
  nn.pixelShuffle(2),
  nn.avgPool2d(2),
  nn.adaptiveAvgPool2d(4),
  nn.adaptiveMaxPool2d(2),
  nn.flatten(),
  nn.identity(),
  nn.unflatten(1, [2, 2]),
  nn.flatten(1),
  nn.linear(4, 3),
];

// Elementwise first (each keeps the samples apart), then those that squash.
const activationLayers = () => [
  nn.linear(6, 6),
  nn.hardtanh(-2, 2),
  nn.leakyRelu(0.2),
  nn.elu(0.5),
  nn.gelu('tanh'),
  nn.silu(),
  nn.mish(),
  nn.hardswish(),
  nn.gelu(),
  nn.tanh(),
  nn.linear(6, 6),
  nn.softplus(2, 10),
  nn.hardsigmoid(),
  nn.sigmoid(),
  nn.relu(),
  nn.dropout(0.2),
  nn.linear(6, 3),
  nn.softmax(),
  nn.logSoftmax(1),
];

const sequenceLayers = () => [
  nn.conv1d(2, 3, 3),
  nn.maxPool1d(2),
  nn.avgPool1d(2, { stride: 1 }),
  nn.adaptiveAvgPool1d(4),
  nn.flatten(),
  nn.linear(12, 3),
];

class Net extends nn.Module {
  conv = nn.conv2d(2, 4, 3, { padding: 1 });
  act = nn.relu();
  pool = nn.maxPool2d(2);
  flat = nn.flatten();
  head = nn.linear(64, 3);
  gelu = nn.gelu('tanh');
  drop = nn.dropout(0.3);
  out = nn.logSoftmax(-1);

  forward(x: Tensor): Tensor {
    const h = this.flat.forward(this.pool.forward(this.act.forward(this.conv.forward(x))));
    return this.out.forward(this.drop.forward(this.gelu.forward(F.relu(this.head.forward(h)))));
  }
}

function randomData(shape: number[], seed: number): Float32Array {
  const random = seededRandom(seed);
  return Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => random() * 6 - 3);
}

async function write(folder: string, model: Module, inputShape: number[]): Promise<void> {
  const samples = 8;
  const shape = [samples, ...inputShape];
  const inputs = randomData(shape, 7);
  const trainer = new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: { name: 'sgd', lr: 0.05 },
    config: { numEpochs: 1, batchSize: 4, progressBar: false, numThreads: 1, seed: 3 },
  });
  await trainer.fit(
    Dataset.fromArrays({ inputs, inputShape: shape, targets: Int32Array.from({ length: samples }, (_, i) => i % 3) }),
  );
  await trainer.save(folder);
  const loaded = await Model.load(folder);
  const prediction = await loaded.predict(inputs, shape);
  fs.writeFileSync(
    path.join(folder, 'expected.json'),
    `${JSON.stringify({ inputShape: shape, inputs: [...inputs], output: { shape: prediction.shape, data: [...prediction.data] } })}\n`,
  );
}

async function main(): Promise<void> {
  const out = process.argv[2];
  await write(path.join(out, 'sequential-image'), nn.sequential(...imageLayers()), [2, 8, 8]);
  await write(path.join(out, 'sequential-activations'), nn.sequential(...activationLayers()), [6]);
  await write(path.join(out, 'sequential-sequence'), nn.sequential(...sequenceLayers()), [2, 8]);
  await write(path.join(out, 'module'), new Net(), [2, 8, 8]);
}

void main();
