// Bad input must give a clear JS error naming what is wrong, never a crash.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, Layer, LayerSpec, nn, runtimeInfo, Trainer } from '../src';
import { blobDataset, blobTrainer, errorOf, rejectionOf, setupError } from './support/helpers';

function trainerWith(layers: (LayerSpec | Layer)[]): Trainer {
  return new Trainer({
    model: nn.sequential(...layers),
    loss: 'cross_entropy',
    optimizer: 'sgd',
    config: { progressBar: false, numThreads: 1 },
  });
}

describe('errors from bad input', () => {
  describe('model description', () => {
    it('names the layer and field of a negative size', async () => {
      const error = await setupError(() => trainerWith([nn.linear(4, 8), nn.conv2d(1, -3, 3)]));
      expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(error.message).to.equal('layers[1] (conv2d).outChannels: got -3, expected an integer >= 1');
    });

    it('names an unknown layer type and suggests the closest one', async () => {
      const error = await setupError(() => trainerWith([{ type: 'lineer' } as unknown as LayerSpec]));
      expect(error.message).to.match(
        /^layers\[0\]: unknown layer type 'lineer' \(did you mean 'linear'\?\); known: linear, conv2d, /,
      );
    });

    it('rejects unknown fields and wrongly typed values', async () => {
      const typo = await setupError(() =>
        trainerWith([{ type: 'linear', inFeatures: 2, outFeatures: 2, bais: false } as LayerSpec]),
      );
      expect(typo.message).to.equal("layers[0] (linear).bais: unknown field (did you mean 'bias'?)");
      const wrongType = await setupError(() => trainerWith([{ type: 'dropout', p: '0.5' } as unknown as LayerSpec]));
      expect(wrongType.message).to.equal("layers[0] (dropout).p: got '0.5', expected a number in [0, 1]");
      const missing = await setupError(() => trainerWith([{ type: 'linear', inFeatures: 3 } as LayerSpec]));
      expect(missing.message).to.equal('layers[0] (linear).outFeatures: missing, expected an integer >= 1');
      const groups = await setupError(() => trainerWith([nn.conv2d(3, 4, 3, { groups: 2 })]));
      expect(groups.message).to.equal(
        'layers[0] (conv2d): inChannels (3) and outChannels (4) must both be divisible by groups (2)',
      );
    });

    it('rejects an empty model and a model that is not sequential', async () => {
      expect((await setupError(() => trainerWith([]))).message).to.contain('needs at least one layer');
      const notModel = await setupError(
        () => new Trainer({ model: {} as never, loss: 'mse', optimizer: 'sgd', config: { progressBar: false } }),
      );
      expect(notModel.message).to.equal('model.type must be a string, got undefined');
    });
  });

  describe('loss, optimizer and config', () => {
    it('names unknown losses and optimizers and bad optimizer options', async () => {
      const loss = await setupError(() => blobTrainer({}, { loss: 'cross_entropyy' as never }));
      expect(loss.message).to.contain("unknown loss 'cross_entropyy' (did you mean 'cross_entropy'?)");
      const optimizer = await setupError(() => blobTrainer({}, { optimizer: 'adamx' as never }));
      expect(optimizer.message).to.contain("unknown optimizer 'adamx'");
      const lr = await setupError(() => blobTrainer({}, { optimizer: { name: 'adamw', lr: -1 } }));
      expect(lr.message).to.equal('optimizer (adamw).lr: got -1, expected a number >= 0');
      const betas = await setupError(() => blobTrainer({}, { optimizer: { name: 'adam', betas: [0.9] as never } }));
      expect(betas.message).to.equal(
        'optimizer (adam).betas: got [0.9], expected a list of 2 numbers in [0, 0.999999999]',
      );
      const nesterov = await setupError(() => blobTrainer({}, { optimizer: { name: 'sgd', nesterov: true } }));
      expect(nesterov.message).to.equal(
        'optimizer (sgd): nesterov needs momentum > 0 and dampening 0, got momentum 0 and dampening 0',
      );
      const both = await setupError(() =>
        blobTrainer({}, { optimizers: [{ name: 'g', optimizer: 'sgd', params: ['0.'], loss: 'loss' }] }),
      );
      expect(both.message).to.equal('give either optimizer or optimizers, not both');
    });

    it('names parameter groups that match nothing, overlap or carry unknown options', async () => {
      const none = await setupError(() =>
        blobTrainer({}, { optimizer: { name: 'sgd', paramGroups: [{ params: ['9.'] }] } }),
      );
      expect(none.message).to.equal(
        "optimizer.paramGroups[0]: '9.' is the prefix of no parameter name; names look like '0.weight', '0.bias', '2.weight', '2.bias'",
      );
      const overlap = await setupError(() =>
        blobTrainer({}, { optimizer: { name: 'adam', paramGroups: [{ params: ['0.'] }, { params: ['0.bias'] }] } }),
      );
      expect(overlap.message).to.contain("parameter '0.bias' is in paramGroups[0] and paramGroups[1]");
      const typo = await setupError(() =>
        blobTrainer({}, { optimizer: { name: 'sgd', paramGroups: [{ params: ['0.'], lrr: 1 } as never] } }),
      );
      expect(typo.message).to.equal("optimizer (sgd).paramGroups[0].lrr: unknown field (did you mean 'lr'?)");
      const notList = await setupError(() =>
        blobTrainer({}, { optimizer: { name: 'sgd', paramGroups: [{ params: '0.' } as never] } }),
      );
      expect(notList.message).to.equal(
        "optimizer (sgd).paramGroups[0].params: got '0.', expected a non-empty list of parameter name prefixes",
      );
    });

    it('rejects unknown config fields, bad devices and bad batch sizes', async () => {
      expect((await setupError(() => blobTrainer({ batchSze: 3 } as never))).message).to.equal(
        "config.batchSze: unknown field (did you mean 'batchSize'?)",
      );
      expect((await setupError(() => blobTrainer({ device: 'tpu' }))).message).to.equal(
        "device: expected 'auto', 'cpu', 'cuda', 'cuda:<index>' or 'mps', got 'tpu'",
      );
      if (runtimeInfo().cudaDeviceCount === 0) {
        expect((await setupError(() => blobTrainer({ device: 'cuda:0' }))).message).to.contain(
          "device 'cuda:0': no CUDA device",
        );
        const auto = blobTrainer({ device: 'auto' });
        await auto.setup();
        expect(auto.device).to.equal('cpu');
      }
      expect((await setupError(() => blobTrainer({ device: 'mps' }))).message).to.contain(
        "device 'mps': this libtorch has no MPS backend",
      );
      expect((await setupError(() => blobTrainer({ numThreads: 0 }))).message).to.equal(
        "config.numThreads: got 0, expected an integer >= 1 or 'auto'",
      );
      // The loader's options have the config's rules, and only their own fields.
      const batch = errorOf(() => blobDataset(32).batches({ batchSize: 0 }));
      expect(batch.message).to.equal('loader options.batchSize: got 0, expected an integer >= 1');
      const misplaced = errorOf(() => blobDataset(32).batches({ maxGradNorm: 1 } as never));
      expect(misplaced.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(misplaced.message).to.equal('loader options.maxGradNorm: unknown field');
      expect(errorOf(() => blobDataset(32).batchOrder({ numWorker: 1, shufle: true } as never)).message).to.equal(
        "batchOrder options has 2 problems:\n  batchOrder options.numWorker: unknown field\n  batchOrder options.shufle: unknown field (did you mean 'shuffle'?)",
      );
    });
  });

  describe('data', () => {
    it('names both shapes when the data does not fit the model', async () => {
      const data = Dataset.fromArrays({
        inputs: new Float32Array(32 * 6),
        inputShape: [32, 6],
        targets: new Int32Array(32),
      });
      const error = await rejectionOf(blobTrainer().fit(data));
      expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
      expect(error.message).to.match(
        /dataset samples of shape \[6\] do not fit the model: layers\[0\] \(linear\) cannot take an input of shape \[1, 6\] float32; it expects \[\*, 4\]/,
      );
    });

    it("names a label outside the model's classes", async () => {
      const data = Dataset.fromArrays({
        inputs: new Float32Array(8 * 4),
        inputShape: [8, 4],
        targets: new Int32Array([0, 1, 1, 0, 7, 1, 0, 1]),
      });
      // Shuffled: the sample is named by its index in the dataset, not its place in the batch.
      const error = await rejectionOf(blobTrainer({ batchSize: 4 }).fit(data));
      expect(error.message).to.match(
        /^epoch 1, step \d: loss \(cross_entropy\): target label 7 of dataset sample 4 is out of range for a model with 2 outputs \(labels must be in \[0, 1\]\)$/,
      );
      expect((await rejectionOf(blobTrainer().evaluate(data))).message).to.contain('target label 7');
    });

    it('checks class weights against the model outputs', async () => {
      const trainer = blobTrainer({}, { loss: { name: 'cross_entropy', weight: [1, 2, 3] } });
      const error = await rejectionOf(trainer.fit(blobDataset(16)));
      expect(error.message).to.equal(
        "epoch 1, step 1: loss (cross_entropy): field 'weight' holds 3 class weights but the model has 2 outputs",
      );
      expect(
        (await setupError(() => blobTrainer({}, { loss: { name: 'cross_entropy', weight: [] } }))).message,
      ).to.equal("loss (cross_entropy).weight: got [], expected a non-empty list of numbers >= 0 or 'balanced'");
    });

    it('refuses float labels for classification and mismatched regression targets', async () => {
      const floatLabels = Dataset.fromArrays({
        inputs: new Float32Array(8 * 4),
        inputShape: [8, 4],
        targets: new Float32Array(8),
      });
      expect((await rejectionOf(blobTrainer().fit(floatLabels))).message).to.contain(
        'targets must be integer class labels',
      );

      const regression = new Trainer({
        model: nn.sequential(nn.linear(4, 3)),
        loss: 'mse',
        optimizer: 'sgd',
        config: { progressBar: false, numThreads: 1 },
      });
      const targets = Dataset.fromArrays({
        inputs: new Float32Array(8 * 4),
        inputShape: [8, 4],
        targets: new Float32Array(8 * 2),
        targetShape: [8, 2],
      });
      const error = await rejectionOf(regression.fit(targets));
      expect(error.message).to.contain('loss (mse): model output [1, 3] and targets [1, 2] differ in shape');
    });

    it('checks TypedArray sizes, sample counts and dataset handles', async () => {
      const size = errorOf(() =>
        Dataset.fromArrays({ inputs: new Float32Array(10), inputShape: [4, 3], targets: new Int32Array(4) }),
      );
      expect(size.message).to.equal('input.data: shape [4, 3] needs 12 values but the Float32Array holds 10');
      const counts = errorOf(() =>
        Dataset.fromArrays({ inputs: new Float32Array(12), inputShape: [4, 3], targets: new Int32Array(5) }),
      );
      expect(counts.message).to.equal(
        'dataset: fields input [4, 3], target [5] hold different numbers of samples; their first dimensions must match',
      );
      const notArray = errorOf(() =>
        Dataset.fromArrays({ inputs: [1, 2] as never, inputShape: [2, 1], targets: new Int32Array(2) }),
      );
      expect(notArray.message).to.contain('input.data must be a TypedArray');
      const slice = errorOf(() => blobDataset(8).slice(4, 2));
      expect(slice.message).to.contain('dataset.slice(4, 2)');
      const fake = { native: {} } as unknown as Dataset;
      return rejectionOf(blobTrainer().fit(fake)).then((error) => {
        expect(error.message).to.equal(
          'trainData must be a Dataset (Dataset.fromIdx, fromArrays, ...) or a StreamingDataset',
        );
      });
    });

    it('reports unreadable and malformed IDX files by path', async () => {
      const missing = await rejectionOf(Dataset.fromIdx('/no/such/images.idx', '/no/such/labels.idx'));
      expect(missing.code).to.equal('ERR_FIREBRAND_FILE');
      expect(missing.message).to.equal('/no/such/images.idx: cannot open IDX file (No such file or directory)');

      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-idx-'));
      const garbage = path.join(dir, 'garbage.idx');
      fs.writeFileSync(garbage, 'this is not an idx file');
      expect((await rejectionOf(Dataset.fromIdx(garbage, garbage))).message).to.contain('not an IDX file');

      const truncated = path.join(dir, 'truncated.idx');
      fs.writeFileSync(truncated, Buffer.from([0, 0, 0x08, 1, 0, 0, 0, 10, 1, 2, 3]));
      expect((await rejectionOf(Dataset.fromIdx(truncated, truncated))).message).to.contain(
        'truncated or corrupt IDX file while reading its data (read 3 of 10 bytes',
      );
      fs.rmSync(dir, { recursive: true });
    });
  });

  describe('concurrency and callbacks', () => {
    it('rejects a second fit or an evaluate while fit runs', async () => {
      const trainer = blobTrainer({ numEpochs: 2 });
      const data = blobDataset(256);
      const running = trainer.fit(data);
      const second = await rejectionOf(trainer.fit(data));
      expect(second.code).to.equal('ERR_FIREBRAND_INVALID_STATE');
      expect(second.message).to.contain('cannot start fit: this trainer is already running fit');
      expect((await rejectionOf(trainer.evaluate(data))).message).to.contain('cannot start evaluate');
      await running;
      expect((await trainer.evaluate(data)).samples).to.equal(256);
    });

    it('rejects fit with the error a callback threw, and the trainer stays usable', async () => {
      const trainer = blobTrainer(
        { numEpochs: 3, logEvery: 2 },
        {
          callbacks: [
            {
              onLog: (logs) => {
                if (logs.globalStep >= 4) throw new Error('callback failed at step 4');
              },
            },
          ],
        },
      );
      // 256 steps per epoch: the stop, asked from the JS thread once it has run the report, ends the
      // fit before its 3 epochs (how many steps run meanwhile depends on how busy the machine is).
      const error = await rejectionOf(trainer.fit(blobDataset(4096)));
      expect(error.message).to.equal('callback onLog threw: callback failed at step 4');
      expect(error.code).to.equal('ERR_FIREBRAND_CALLBACK');
      expect((error.cause as Error).message).to.equal('callback failed at step 4');
      expect(trainer.globalStep)
        .to.be.at.least(4)
        .and.below(3 * 256);
      expect((await trainer.evaluate(blobDataset(32))).samples).to.equal(32);
    });
  });
});
