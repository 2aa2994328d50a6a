// Bad input found by trying what users try: each gets a coded error that
// names what is at fault (or the behaviour users expect), never a crash, a
// hang or a raw Node error.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

import { Dataset, loadSafetensors, nn, Trainer, transforms } from '../src';
import { blobDataset, blobTrainer, idxFile, rejectionOf } from './support/helpers';

function temporaryFolder(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-bad-input-'));
}

/** A .npy file whose header claims `shape` of float32 over `dataBytes` bytes. */
function npyFile(file: string, shape: string, dataBytes: number): void {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const length = Buffer.alloc(2);
  length.writeUInt16LE(header.length);
  fs.writeFileSync(
    file,
    Buffer.concat([Buffer.from('\x93NUMPY\x01\x00', 'latin1'), length, Buffer.from(header), Buffer.alloc(dataBytes)]),
  );
}

/** An IDX file of unsigned bytes with the given dimensions and `dataBytes` bytes of data. */
function idxBytes(dims: number[], dataBytes: number): Buffer {
  return idxFile(0x08, dims, Buffer.alloc(dataBytes, 1));
}

describe('bad input', () => {
  describe('a callback whose promise never settles', () => {
    for (const hook of ['preTrainBatch', 'preEpoch', 'postEpoch'] as const) {
      it(`cannot hold an aborted fit forever (${hook}); the trainer trains again afterwards`, async () => {
        let calls = 0;
        const controller = new AbortController();
        const trainer = blobTrainer(
          { numEpochs: 4 },
          {
            callbacks: {
              [hook]: () => {
                if (++calls !== 2) return undefined;
                setTimeout(() => controller.abort(), 50);
                return new Promise(() => {});
              },
            },
          },
        );
        const started = Date.now();
        const error = await rejectionOf(trainer.fit(blobDataset(64), { signal: controller.signal, abortGraceMs: 200 }));
        expect(Date.now() - started).to.be.below(5000);
        expect(error.code).to.equal('ERR_FIREBRAND_CALLBACK_ABANDONED');
        expect(error.message).to.equal(
          `callback ${hook} had not settled 0.2 s after fit was aborted; fit stopped waiting for it ` +
            '(its promise never settled, or took longer than fit(data, { abortGraceMs }))',
        );
        calls = 100;
        const history = await trainer.fit(blobDataset(64), { numEpochs: 1 });
        expect(history.epochs).to.have.length(1);
      });
    }

    it('nor one pending when SIGTERM arrives', async () => {
      const trainer = blobTrainer(
        { numEpochs: 3 },
        {
          callbacks: {
            preEpoch: (epoch: number) => {
              if (epoch !== 1) return undefined;
              process.kill(process.pid, 'SIGTERM');
              return new Promise(() => {});
            },
          },
        },
      );
      const error = await rejectionOf(trainer.fit(blobDataset(64), { abortGraceMs: 100 }));
      expect(error.code).to.equal('ERR_FIREBRAND_CALLBACK_ABANDONED');
      expect(error.message).to.contain('callback preEpoch had not settled');
    });

    it('a slow hook that settles within the grace still runs to its end', async () => {
      const controller = new AbortController();
      let finished = false;
      const trainer = blobTrainer(
        { numEpochs: 3 },
        {
          callbacks: {
            postEpoch: async () => {
              controller.abort();
              await new Promise((resolve) => setTimeout(resolve, 50));
              finished = true;
            },
          },
        },
      );
      const history = await trainer.fit(blobDataset(64), { signal: controller.signal, abortGraceMs: 2000 });
      expect(finished).to.equal(true);
      expect(history.stopReason).to.equal("fit's signal was aborted");
      expect((await rejectionOf(trainer.fit(blobDataset(64), { abortGraceMs: -1 }))).message).to.contain(
        'fit: options.abortGraceMs must be a number of milliseconds >= 0, got -1',
      );
    });
  });

  it('an existing file as outputDir', async () => {
    const folder = temporaryFolder();
    const file = path.join(folder, 'out');
    fs.writeFileSync(file, 'not a folder');
    const error = await rejectionOf(blobTrainer({ outputDir: file }).fit(blobDataset(32)));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.equal(
      `config.outputDir: ${file} is a file, expected a directory (or a path to create one at)`,
    );
    fs.rmSync(folder, { recursive: true });
  });

  it('a directory where a file is expected', async () => {
    const folder = temporaryFolder();
    const isDirectory = async (promise: Promise<unknown>, kind: string) => {
      const error = await rejectionOf(promise);
      expect(error.code).to.equal('ERR_FIREBRAND_FILE');
      expect(error.message).to.contain(`${folder}: is a directory, expected a ${kind}`);
    };
    await isDirectory(loadSafetensors(folder), 'safetensors file');
    await isDirectory(
      blobTrainer().initWeightsFrom(folder),
      'weights file (.safetensors, torch.save .pt/.pth or TorchScript)',
    );
    await isDirectory(Dataset.fromNpy(folder, folder), '.npy file');
    await isDirectory(Dataset.fromCsv(folder), 'CSV file');
    await isDirectory(Dataset.fromIdx(folder, folder), 'IDX file');
    await isDirectory(Dataset.fromNpz(folder), 'zip archive (.npz)');
    fs.rmSync(folder, { recursive: true });
  });

  it('file headers claiming more data than the file holds', async () => {
    const folder = temporaryFolder();
    const npy = path.join(folder, 'huge.npy');
    npyFile(npy, '(1000000000000000, 4)', 160);
    const npyError = await rejectionOf(Dataset.fromNpy(npy, npy));
    expect(npyError.code).to.equal('ERR_FIREBRAND_FILE');
    expect(npyError.message).to.equal(
      `${npy}: truncated .npy data: its header claims shape (1000000000000000, 4) of float32, 16000000000000000 bytes, but only 160 bytes follow it`,
    );
    const overflowing = path.join(folder, 'overflow.npy');
    npyFile(overflowing, '(99999999999999999999, 4)', 16);
    expect((await rejectionOf(Dataset.fromNpy(overflowing, overflowing))).message).to.contain(
      `${overflowing}: truncated .npy data`,
    );

    const labels = path.join(folder, 'labels.idx');
    fs.writeFileSync(labels, idxBytes([4], 4));
    const plain = path.join(folder, 'images.idx');
    fs.writeFileSync(plain, idxBytes([0xffffffff, 28, 28], 64));
    const idxError = await rejectionOf(Dataset.fromIdx(plain, labels));
    expect(idxError.code).to.equal('ERR_FIREBRAND_FILE');
    expect(idxError.message).to.equal(
      `${plain}: its header claims an array of shape [4294967295, 28, 28] (3367254359280 bytes), more than the file's 80 bytes can hold (corrupt or not an IDX file)`,
    );
    const compressed = path.join(folder, 'images.idx.gz');
    fs.writeFileSync(compressed, zlib.gzipSync(idxBytes([0xffffffff, 0xffffffff, 0xffffffff], 64)));
    expect((await rejectionOf(Dataset.fromIdx(compressed, labels))).message).to.match(
      new RegExp(
        `^${compressed}: its header claims an array of shape \\[4294967295, 4294967295, 4294967295\\] \\(\\d+ bytes\\), more than the file's \\d+ bytes can hold compressed`,
      ),
    );
    fs.rmSync(folder, { recursive: true });
  });

  it('Dataset.fromIdx with the labels and images swapped', async () => {
    const folder = temporaryFolder();
    const images = path.join(folder, 'images.idx');
    const labels = path.join(folder, 'labels.idx');
    fs.writeFileSync(images, idxBytes([4, 2, 2], 16));
    fs.writeFileSync(labels, idxBytes([4], 4));
    expect((await Dataset.fromIdx(images, labels)).length).to.equal(4);
    const error = await rejectionOf(Dataset.fromIdx(labels, images));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.equal(
      `Dataset.fromIdx: ${labels} holds one value per sample [4] and ${images} holds [4, 2, 2]: ` +
        'the files look swapped; give the inputs (images) first and the labels second',
    );
    fs.rmSync(folder, { recursive: true });
  });

  it('trainer.learningRates read from every hook: per batch, per step report and per epoch', async () => {
    const seen: Record<'postTrainBatch' | 'onBatchEnd' | 'onProgress' | 'postEpoch', number[][]> = {
      postTrainBatch: [],
      onBatchEnd: [],
      onProgress: [],
      postEpoch: [],
    };
    const trainer: Trainer = blobTrainer(
      { numEpochs: 2, batchSize: 16 },
      {
        optimizer: { name: 'sgd', lr: 0.1, paramGroups: [{ params: ['0.'], lr: 0.01 }] },
        lrScheduler: 'linear',
        callbacks: {
          postTrainBatch: (_info, self) => void seen.postTrainBatch.push(self.learningRates),
          onBatchEnd: () => void seen.onBatchEnd.push(trainer.learningRates),
          onProgress: (logs) => {
            expect(trainer.learningRates).to.deep.equal(logs.learningRates);
            seen.onProgress.push(trainer.learningRates);
          },
          postEpoch: (_epoch, _logs, self) => void seen.postEpoch.push(self.learningRates),
        },
      },
    );
    await trainer.fit(blobDataset(64));
    expect(seen.postTrainBatch).to.have.length(8);
    expect(seen.onBatchEnd).to.deep.equal(seen.postTrainBatch);
    expect(seen.onProgress.length).to.be.at.least(1);
    // A linear decay over 8 steps: after step k the next rates are (1 - k/8) of the base ones.
    seen.postTrainBatch.forEach(([group0, group1], k) => {
      expect(group0).to.be.closeTo(0.01 * (1 - (k + 1) / 8), 1e-12);
      expect(group1).to.be.closeTo(0.1 * (1 - (k + 1) / 8), 1e-12);
    });
    expect(seen.postEpoch).to.deep.equal([seen.postTrainBatch[3], seen.postTrainBatch[7]]);
  });

  it('integer inputs to a float layer: the error says dtype, not shape', async () => {
    const data = Dataset.fromArrays({
      inputs: new BigInt64Array(32 * 4),
      inputShape: [32, 4],
      targets: new Int32Array(32),
    });
    const error = await rejectionOf(blobTrainer().fit(data));
    expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(error.message).to.equal(
      "epoch 1, step 1: layers[0] (linear) takes floating-point inputs but got [1, 4] int64 (its weights are float32): give the inputs as a Float32Array, or convert them with transforms.cast({ dtype: 'float32' })",
    );
    const embedded = new Trainer({
      model: nn.sequential(nn.embedding(10, 4), nn.flatten(), nn.linear(8, 2)),
      loss: 'cross_entropy',
      optimizer: 'sgd',
      config: { progressBar: false, numEpochs: 1 },
    });
    const tokens = Dataset.fromArrays({
      inputs: new BigInt64Array(16 * 2).fill(3n),
      inputShape: [16, 2],
      targets: new Int32Array(16),
    });
    expect((await embedded.fit(tokens)).epochs).to.have.length(1);
  });

  it('channels-last images to normalize, an empty predict and one channel: each said plainly', async () => {
    // [N, H, W, C] as a canvas or sharp gives it, to a per-channel normalize of 3 values.
    const canvas = Dataset.fromArrays({
      inputs: new Float32Array(2 * 8 * 8 * 3),
      inputShape: [2, 8, 8, 3],
      targets: new Int32Array(2),
    }).withTransforms(transforms.normalize({ mean: [0.5, 0.5, 0.5], std: [0.2, 0.2, 0.2] }));
    const lastError = await rejectionOf(
      (async () => {
        for await (const batch of canvas.batches({ batchSize: 2 })) expect(batch).to.equal(undefined);
      })(),
    );
    expect(lastError.message).to.contain(
      'its last dimension holds 3: this looks like channels last ([H, W, C], as a canvas or sharp gives); images are [C, H, W]',
    );
    const gray = Dataset.fromArrays({
      inputs: new Float32Array(2 * 8 * 8),
      inputShape: [2, 1, 8, 8],
      targets: new Int32Array(2),
    }).withTransforms(transforms.normalize({ mean: [0.5, 0.5], std: [0.2, 0.2] }));
    const oneError = await rejectionOf(
      (async () => {
        for await (const batch of gray.batches({ batchSize: 2 })) expect(batch).to.equal(undefined);
      })(),
    );
    expect(oneError.message).to.contain('with 1 channels (dimension 1); give 1 value');
    const trainer = blobTrainer({ numEpochs: 1 });
    await trainer.fit(blobDataset(16));
    expect((await rejectionOf(trainer.predict([]))).message).to.equal(
      'predict: got an empty array; give at least one sample (records, encoded images, or values with their shape)',
    );
  });

  it("a kill between writing `latest`'s temporary file and renaming it: the next run removes the file", async () => {
    const outputDir = temporaryFolder();
    const checkpoints = path.join(outputDir, 'checkpoints');
    fs.mkdirSync(checkpoints);
    const leftOver = path.join(checkpoints, 'latest.tmp-999999');
    fs.writeFileSync(leftOver, 'step-4\n');
    await blobTrainer({ numEpochs: 1, outputDir }).fit(blobDataset(32));
    expect(fs.existsSync(leftOver)).to.equal(false);
    expect(fs.readdirSync(checkpoints).sort()).to.deep.equal(['latest', 'step-2']);
    fs.rmSync(outputDir, { recursive: true });
  });
});
