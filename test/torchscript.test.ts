// TorchScript models: trained from files saved by PyTorch (checked against
// PyTorch's own training of them), defined from TypeScript, and exported.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, nn, StepLogs, Trainer } from '../src';
import { blobDataset, rejectionOf, setupError, seededRandom } from './support/helpers';
import { expectClose } from './support/expect-close';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures');
const scripted = path.join(fixtures, 'scripted');
const golden = JSON.parse(fs.readFileSync(path.join(scripted, 'golden-scripted.json'), 'utf8'));
const training = JSON.parse(fs.readFileSync(path.join(fixtures, 'golden-training.json'), 'utf8'));
const inputs = new Float32Array(training.inputs.flat());
const samples = training.inputs.length;
const config = { numEpochs: 2, batchSize: 4, shuffle: false, logEvery: 1, progressBar: false, numThreads: 1 };

describe('TorchScript models', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-ts-'));
  });
  after(() => fs.rmSync(dir, { recursive: true }));

  it('trains a module scripted in Python with a firebrand loss, as PyTorch does', async () => {
    const losses: number[] = [];
    const trainer = new Trainer({
      model: nn.torchScript(path.join(scripted, 'classifier.pt')),
      loss: 'cross_entropy',
      optimizer: { name: 'sgd', lr: 0.1, momentum: 0.9 },
      config,
      callbacks: [{ onLog: (logs: StepLogs) => losses.push(logs.loss) }],
    });
    await trainer.fit(
      Dataset.fromArrays({ inputs, inputShape: [samples, 4], targets: new Int32Array(training.labels) }),
    );
    expectClose(losses, golden.classifier.stepLosses, 'step loss');
    const output = await trainer.predict(inputs.slice(0, 16), [4, 4]);
    expectClose(Array.from(output.data), golden.classifier.predictions, 'prediction');
  });

  it("calls the module's own training_step and validation_step, logging their other entries", async () => {
    const losses: number[] = [];
    const trainer = new Trainer({
      model: nn.torchScript(path.join(scripted, 'regressor.pt')),
      optimizer: { name: 'sgd', lr: 0.1, momentum: 0.9 },
      config,
      callbacks: [{ onLog: (logs: StepLogs) => losses.push(logs.loss) }],
    });
    const data = Dataset.fromArrays({
      inputs,
      inputShape: [samples, 4],
      targets: new Float32Array(training.regressionTargets),
    });
    const history = await trainer.fit(data);
    expectClose(losses, golden.regressor.stepLosses, 'step loss');
    expectClose(
      history.epochs.map((epoch) => (epoch as unknown as { mae: number }).mae),
      golden.regressor.epochMae,
      'epoch mae',
    );
    // One batch of all samples: validation_step's max_error is then the dataset's.
    const evaluation = (await trainer.evaluate(data, { batchSize: samples })) as unknown as Record<string, number>;
    expect(evaluation.loss).to.be.closeTo(golden.regressor.validation.loss, 1e-5);
    expect(evaluation.max_error).to.be.closeTo(golden.regressor.validation.max_error, 1e-5);
  });

  it('steps several optimizers, each on its own loss from training_step (GAN-style), as PyTorch does', async () => {
    const gan = golden.gan;
    const losses: number[] = [];
    const trainer = new Trainer({
      model: nn.torchScript(path.join(scripted, 'gan.pt')),
      optimizers: [
        { name: 'generator', optimizer: { name: 'adam', lr: 0.01 }, params: ['gen.'], loss: 'loss_g' },
        { name: 'discriminator', optimizer: { name: 'sgd', lr: 0.05 }, params: ['disc.'], loss: 'loss_d' },
      ],
      config: { ...config, batchSize: 8 },
      callbacks: [{ onLog: (logs: StepLogs) => losses.push(logs.loss) }],
    });
    const data = Dataset.fromArrays({
      inputs: new Float32Array(gan.noise.flat()),
      inputShape: [samples, 2],
      targets: new Float32Array(gan.real.flat()),
      targetShape: [samples, 2],
    });
    const history = await trainer.fit(data);
    expectClose(losses, gan.stepLosses, 'step loss (loss_g + loss_d)');
    history.epochs.forEach((epoch, i) => {
      const logged = epoch as unknown as Record<string, number>;
      expect(logged.loss_g, `epoch ${i} loss_g`).to.be.closeTo(gan.epochMeans[i].loss_g, 1e-5);
      expect(logged.loss_d, `epoch ${i} loss_d`).to.be.closeTo(gan.epochMeans[i].loss_d, 1e-5);
    });
    const output = await trainer.predict(new Float32Array(gan.noise.slice(0, 3).flat()), [3, 2]);
    expectClose(Array.from(output.data), gan.predictions, 'generated');

    const uncovered = await setupError(
      () =>
        new Trainer({
          model: nn.torchScript(path.join(scripted, 'gan.pt')),
          optimizers: [
            { name: 'generator', optimizer: 'adam', params: ['gen.'], loss: 'loss_g' },
            { name: 'd', optimizer: 'sgd', params: ['disc.weight'], loss: 'loss_d' },
          ],
          config,
        }),
    );
    expect(uncovered.message).to.equal(
      "optimizers: parameter 'disc.bias' belongs to no optimizer; list a prefix of it in one optimizer's params",
    );
  });

  it('defines a module from TorchScript source and named parameters in TypeScript', async () => {
    const random = seededRandom(11);
    const x = new Float32Array(128).map(() => random() * 2 - 1);
    const y = x.map((value) => 3 * value + 1);
    const model = nn.script(
      `
def forward(self, x):
    return x * self.weight + self.bias

def training_step(self, batch: Dict[str, Tensor]) -> Dict[str, Tensor]:
    error = self.forward(batch["input"]) - batch["target"]
    return {"loss": (error * error).mean()}
`,
      [
        { name: 'weight', data: new Float32Array([0]), shape: [1] },
        { name: 'bias', data: new Float32Array([0]), shape: [1] },
      ],
    );
    const trainer = new Trainer({
      model,
      optimizer: { name: 'sgd', lr: 0.1 },
      config: { ...config, numEpochs: 30, batchSize: 16 },
    });
    await trainer.setup();
    expect(trainer.parameterCount).to.equal(2);
    await trainer.fit(Dataset.fromArrays({ inputs: x, inputShape: [128], targets: y }));
    const output = await trainer.predict(new Float32Array([0, 1]), [2]);
    expect(output.data[0]).to.be.closeTo(1, 1e-3);
    expect(output.data[1]).to.be.closeTo(4, 1e-3);
  });

  it('exports a trained sequential model to TorchScript that predicts the same', async () => {
    const images = Dataset.fromArrays({
      inputs: new Float32Array(32 * 2 * 8 * 8).map((_, i) => Math.sin(i * 0.37)),
      inputShape: [32, 2, 8, 8],
      targets: new Int32Array(32).map((_, i) => i % 3),
    });
    const trainer = new Trainer({
      model: nn.sequential(
        nn.conv2d(2, 4, 3, { padding: 1, stride: [1, 1] }),
        nn.batchNorm2d(4),
        nn.gelu('tanh'),
        nn.maxPool2d(2),
        nn.conv2d(4, 4, 3, { padding: 1, bias: false }),
        nn.relu(),
        nn.avgPool2d(2),
        nn.flatten(),
        nn.linear(16, 8),
        nn.batchNorm1d(8),
        nn.layerNorm(8),
        nn.sigmoid(),
        nn.dropout(0.2),
        nn.linear(8, 3),
        nn.tanh(),
        nn.logSoftmax(1),
      ),
      loss: 'nll',
      optimizer: 'adam',
      config: { ...config, batchSize: 8 },
    });
    await trainer.fit(images);
    const state = await trainer.stateDict();
    expect(state['1.running_mean'].shape).to.deep.equal([4]);
    // 2 epochs of 4 batches; BigInt values compared as numbers (chai cannot print BigInt diffs).
    expect(Number((state['1.num_batches_tracked'].data as BigInt64Array)[0])).to.equal(8);
    expect(state['8.weight'].shape).to.deep.equal([8, 16]);
    const file = path.join(dir, 'exported.pt');
    await trainer.exportTorchScript(file);
    const probe = images.fields().input;
    const before = await trainer.predict(probe.data, probe.shape);
    const reloaded = new Trainer({ model: nn.torchScript(file), loss: 'nll', optimizer: 'sgd', config });
    await reloaded.setup();
    expect(reloaded.parameterCount).to.equal(trainer.parameterCount);
    const after = await reloaded.predict(probe.data, probe.shape);
    expect(after.shape).to.deep.equal([32, 3]);
    expectClose(Array.from(after.data), Array.from(before.data), 'output');

    const embedder = new Trainer({
      model: nn.sequential(nn.embedding(10, 3, { paddingIdx: 0 }), nn.flatten(), nn.softmax(1)),
      loss: 'mse',
      optimizer: 'sgd',
      config,
    });
    const tokens = new BigInt64Array([1n, 2n, 0n, 9n]);
    await embedder.exportTorchScript(path.join(dir, 'embedder.pt'));
    const reloadedEmbedder = new Trainer({
      model: nn.torchScript(path.join(dir, 'embedder.pt')),
      loss: 'mse',
      optimizer: 'sgd',
      config,
    });
    expectClose(
      Array.from((await reloadedEmbedder.predict(tokens, [2, 2])).data),
      Array.from((await embedder.predict(tokens, [2, 2])).data),
      'embedding output',
    );
  });

  it('names bad files, bad source and steps that return no loss', async () => {
    const missing = await setupError(
      () => new Trainer({ model: nn.torchScript('/no/such/model.pt'), loss: 'mse', optimizer: 'sgd', config }),
    );
    expect(missing.code).to.equal('ERR_FIREBRAND_FILE');
    expect(missing.message).to.equal('/no/such/model.pt: cannot open TorchScript file (No such file or directory)');
    const notModule = await setupError(
      () =>
        new Trainer({
          model: nn.torchScript(path.join(fixtures, 'golden-metrics.json')),
          loss: 'mse',
          optimizer: 'sgd',
          config,
        }),
    );
    expect(notModule.message).to.contain('not a TorchScript module saved by torch.jit.save');
    const badSource = await setupError(
      () =>
        new Trainer({
          model: nn.script('def forward(self, x):\n    return x +* 1\n', []),
          loss: 'mse',
          optimizer: 'sgd',
          config,
        }),
    );
    expect(badSource.message).to.contain('script model: the TorchScript source does not compile');
    // Without a loss the trainer sets up (to predict), and fit says what it lacks.
    const withoutLoss = new Trainer({
      model: nn.torchScript(path.join(scripted, 'classifier.pt')),
      optimizer: 'sgd',
      config,
    });
    const noLoss = await rejectionOf(withoutLoss.fit(blobDataset(16)));
    expect(noLoss.message).to.equal('loss: needed to train, since the model defines no training_step');

    const lossless = nn.script(
      `
def forward(self, x):
    return x * self.w

def training_step(self, batch: Dict[str, Tensor]) -> Dict[str, Tensor]:
    return {"error": (self.forward(batch["input"]) - batch["target"]).mean()}
`,
      [{ name: 'w', data: new Float32Array([1]), shape: [1] }],
    );
    const trainer = new Trainer({ model: lossless, optimizer: 'sgd', config });
    const error = await rejectionOf(
      trainer.fit(Dataset.fromArrays({ inputs: new Float32Array(8), inputShape: [8], targets: new Float32Array(8) })),
    );
    expect(error.message).to.equal(
      "epoch 1, step 1: training_step must return a Dict[str, Tensor] with a scalar 'loss'; it returned {error}",
    );
    expect((await rejectionOf(trainer.evaluate(blobDataset(8)))).message).to.contain('loss: needed to evaluate');
  });
});
