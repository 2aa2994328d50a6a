// The C++ loader: batch transforms, determinism across worker counts,
// mid-epoch starts, named fields.
import { expect } from 'chai';

import { Dataset, DatasetFields, nn, Trainer, transforms } from '../src';
import { blobDataset, blobTrainer, collect, errorOf, makeBlobs, rejectionOf } from './support/helpers';

/** 12 images [1, 4, 5] whose pixel values are their flat index, labels 0..2. */
function images(): Dataset {
  const count = 12;
  const pixels = 1 * 4 * 5;
  return Dataset.fromArrays({
    inputs: Float32Array.from({ length: count * pixels }, (_, i) => i),
    inputShape: [count, 1, 4, 5],
    targets: Int32Array.from({ length: count }, (_, i) => i % 3),
  });
}

const plainState = (state: Record<string, { data: ArrayLike<number | bigint> }>) =>
  Object.fromEntries(Object.entries(state).map(([name, tensor]) => [name, Array.from(tensor.data, Number)]));

const plain = (batches: DatasetFields[]) =>
  batches.map((batch) =>
    Object.fromEntries(
      Object.entries(batch).map(([name, t]) => [
        name,
        { shape: t.shape, data: Array.from(t.data as Float32Array, Number) },
      ]),
    ),
  );

describe('data loader and batch transforms', () => {
  it('gives the same transformed batches for any number of workers, and new ones for another seed or epoch', async () => {
    const data = images().withTransforms(
      transforms.randomCrop({ size: [4, 5], padding: 1 }),
      transforms.randomHorizontalFlip(),
      transforms.normalize({ mean: 0.5, std: 2 }),
    );
    const options = { batchSize: 5, seed: 7, epoch: 1 };
    const inline = plain(await collect(data.batches({ ...options, numWorkers: 0 })));
    expect(inline.map((batch) => batch.input.shape)).to.deep.equal([
      [5, 1, 4, 5],
      [5, 1, 4, 5],
      [2, 1, 4, 5],
    ]);
    for (const numWorkers of [1, 3]) {
      expect(
        plain(await collect(data.batches({ ...options, numWorkers, prefetchFactor: 1 }))),
        `${numWorkers} workers`,
      ).to.deep.equal(inline);
    }
    expect(plain(await collect(data.batches({ ...options, epoch: 2 })))).to.not.deep.equal(inline);
    expect(plain(await collect(data.batches({ ...options, seed: 8 })))).to.not.deep.equal(inline);
  });

  it('cuts untransformed batches as the rows batchOrder names, for every field type and worker count', async () => {
    const count = 23;
    const data = Dataset.fromFields({
      input: { data: Float32Array.from({ length: count * 6 }, (_, i) => i + 0.5), shape: [count, 2, 3] },
      target: { data: Int32Array.from({ length: count }, (_, i) => 100 + i), shape: [count] },
      mask: { data: Uint8Array.from({ length: count * 2 }, (_, i) => i % 251), shape: [count, 2] },
      token: { data: BigInt64Array.from({ length: count }, (_, i) => BigInt(i) * 3n), shape: [count] },
    });
    const source = data.fields();
    const rows = (name: string, indices: number[]) => {
      const field = source[name];
      const width = field.shape.slice(1).reduce((a, b) => a * b, 1);
      return indices.flatMap((row) =>
        Array.from(field.data.subarray(row * width, (row + 1) * width) as ArrayLike<number | bigint>, Number),
      );
    };
    for (const options of [
      { batchSize: 5, seed: 3, epoch: 2 },
      { batchSize: 4, shuffle: false },
      { batchSize: 3, seed: 1, rank: 1, worldSize: 3 },
    ]) {
      const order = data.batchOrder(options);
      for (const numWorkers of [0, 1, undefined]) {
        const batches = await collect(data.batches({ ...options, numWorkers }));
        expect(batches, JSON.stringify({ ...options, numWorkers })).to.have.length(order.length);
        batches.forEach((batch, b) => {
          for (const name of ['input', 'target', 'mask', 'token']) {
            expect(batch[name].data.constructor).to.equal(source[name].data.constructor);
            expect(batch[name].shape).to.deep.equal([order[b].length, ...source[name].shape.slice(1)]);
            expect(
              Array.from(batch[name].data as ArrayLike<number | bigint>, Number),
              `${name} of batch ${b}`,
            ).to.deep.equal(rows(name, order[b]));
          }
        });
      }
    }
  });

  it('trains to the same weights for any number of workers, with batches held across an accumulation group', async () => {
    // The loader reuses a batch's memory once nothing holds it: a batch overwritten while a step
    // still used it would change the losses and weights of one of these runs.
    const data = blobDataset(200, 4, 5);
    const runs = [];
    for (const numWorkers of [0, 1, 3, 'auto'] as const) {
      const trainer = blobTrainer({ numWorkers, batchSize: 8, gradientAccumulationSteps: 3, seed: 11 });
      const history = await trainer.fit(data);
      runs.push({ losses: history.epochs.map((epoch) => epoch.loss), weights: plainState(await trainer.stateDict()) });
    }
    for (const run of runs.slice(1)) expect(run).to.deep.equal(runs[0]);
  });

  it('crops windows of the zero-padded image and flips whole samples, as torchvision does', async () => {
    const source = images();
    const original = source.fields().input.data as Float32Array;
    const cropped = await collect(
      source
        .withTransforms(transforms.randomCrop({ size: [4, 5], padding: 2 }))
        .batches({ batchSize: 12, shuffle: false }),
    );
    const flipped = await collect(
      source.withTransforms(transforms.randomHorizontalFlip({ p: 0.5 })).batches({ batchSize: 12, shuffle: false }),
    );
    let shifted = 0;
    let mirrored = 0;
    for (let sample = 0; sample < 12; sample++) {
      const at = (data: Float32Array, y: number, x: number) => data[sample * 20 + y * 5 + x];
      const crop = cropped[0].input.data as Float32Array;
      // The window's offset: where the original pixel (0, 0) or any known pixel went.
      let found = false;
      for (let dy = -2; dy <= 2 && !found; dy++) {
        for (let dx = -2; dx <= 2 && !found; dx++) {
          const matches = [...Array(4).keys()].every((y) =>
            [...Array(5).keys()].every((x) => {
              const sy = y + dy;
              const sx = x + dx;
              const expected = sy >= 0 && sy < 4 && sx >= 0 && sx < 5 ? at(original, sy, sx) : 0;
              return at(crop, y, x) === expected;
            }),
          );
          if (matches) {
            found = true;
            if (dx !== 0 || dy !== 0) shifted++;
          }
        }
      }
      expect(found, `sample ${sample} is a window of the padded image`).to.equal(true);
      const flip = flipped[0].input.data as Float32Array;
      const same = [...Array(20).keys()].every((i) => flip[sample * 20 + i] === original[sample * 20 + i]);
      const mirror = [...Array(20).keys()].every(
        (i) => flip[sample * 20 + i] === at(original, Math.floor(i / 5), 4 - (i % 5)),
      );
      expect(same || mirror, `sample ${sample} is itself or mirrored`).to.equal(true);
      if (mirror) mirrored++;
    }
    expect(shifted).to.be.greaterThan(0);
    expect(mirrored).to.be.within(1, 11);
  });

  it('normalizes per channel, casts and one-hot encodes', async () => {
    const data = Dataset.fromFields({
      input: { data: Uint8Array.from([0, 10, 20, 30, 40, 50, 60, 70]), shape: [2, 2, 2] },
      target: { data: Int32Array.from([2, 0]), shape: [2] },
    }).withTransforms(
      transforms.cast({ dtype: 'float64' }),
      transforms.normalize({ mean: [10, 20], std: [10, 5] }),
      transforms.oneHot({ numClasses: 3 }),
    );
    const [batch] = await collect(data.batches({ batchSize: 2, shuffle: false }));
    expect(batch.input.data).to.be.instanceOf(Float64Array);
    expect(Array.from(batch.input.data as Float64Array)).to.deep.equal([-1, 0, 0, 2, 3, 4, 8, 10]);
    expect(batch.target.shape).to.deep.equal([2, 3]);
    expect(Array.from(batch.target.data as Float32Array)).to.deep.equal([0, 0, 1, 1, 0, 0]);
  });

  it('starts mid-epoch with exactly the batches the full epoch has there', async () => {
    const data = blobDataset(40).withTransforms(transforms.normalize({ mean: 1, std: 3 }));
    const options = { batchSize: 6, seed: 3, epoch: 4 };
    const full = plain(await collect(data.batches(options)));
    const resumed = plain(await collect(data.batches({ ...options, startBatch: 4 })));
    expect(full).to.have.length(7);
    expect(resumed).to.deep.equal(full.slice(4));
    expect(errorOf(() => data.batches({ ...options, startBatch: 7 })).message).to.equal(
      'startBatch 7 must be in [0, 7), the batches of this epoch',
    );
  });

  it('names the transform, field and shape at fault', async () => {
    const data = blobDataset(8);
    expect(errorOf(() => data.withTransforms({ name: 'normalise' as 'normalize', mean: 0, std: 1 })).message).to.equal(
      "transforms[0]: unknown transform 'normalise' (did you mean 'normalize'?); known: normalize, cast, randomHorizontalFlip, randomCrop, oneHot",
    );
    expect(errorOf(() => data.withTransforms(transforms.normalize({ mean: 0, std: 0 }))).message).to.equal(
      'transforms[0] (normalize).std: got 0, expected a number > 0 or a non-empty list of them',
    );
    const wrongChannels = data.withTransforms(transforms.normalize({ mean: [0, 1, 2], std: 1 }));
    expect((await rejectionOf(collect(wrongChannels.batches()))).message).to.equal(
      'transforms[0] (normalize): 3 values for batches [8, 4] with 4 channels (dimension 1); give 1 or 4',
    );
    const noImages = data.withTransforms(transforms.randomCrop({ size: 2 }));
    expect((await rejectionOf(blobTrainer({ numEpochs: 1 }).fit(noImages))).message).to.equal(
      'epoch 1, step 1: transforms[0] (randomCrop): needs batches [N, ..., H, W], got [8, 4]',
    );
    const noField = data.withTransforms(transforms.cast({ field: 'mask' }));
    expect((await rejectionOf(collect(noField.batches()))).message).to.equal(
      "transforms[0] (cast): the batch has no field 'mask' (it has input, target)",
    );
    const labels = data.withTransforms(transforms.oneHot({ numClasses: 1 }));
    expect((await rejectionOf(collect(labels.batches()))).message).to.equal(
      'transforms[0] (oneHot): label 1 is outside [0, 1) for numClasses 1',
    );
  });

  it('trains on transformed batches, and gives a TorchScript step every named field', async () => {
    const history = await blobTrainer({ numEpochs: 4 }).fit(
      blobDataset(128).withTransforms(transforms.normalize({ mean: 0.1, std: 1.2 })),
    );
    expect(history.epochs[3].accuracy).to.be.greaterThan(0.95);

    // A masked regression: only samples with mask 1 count, so the masked-out targets (1000) must not pull.
    const samples = 64;
    const inputs = Float32Array.from({ length: samples }, (_, i) => (i % 8) / 8);
    const mask = Float32Array.from({ length: samples }, (_, i) => (i % 4 === 3 ? 0 : 1));
    const target = Float32Array.from(inputs, (x, i) => (mask[i] ? 3 * x + 1 : 1000));
    const model = nn.script(
      `
def forward(self, x):
    return x * self.weight + self.bias

def training_step(self, batch: Dict[str, Tensor]) -> Dict[str, Tensor]:
    error = (self.forward(batch["input"]) - batch["target"]) * batch["mask"]
    return {"loss": (error * error).sum() / batch["mask"].sum()}
`,
      [
        { name: 'weight', data: new Float32Array([0]), shape: [1] },
        { name: 'bias', data: new Float32Array([0]), shape: [1] },
      ],
    );
    const trainer = new Trainer({
      model,
      optimizer: { name: 'adam', lr: 0.1 },
      config: { numEpochs: 60, batchSize: 16, progressBar: false },
    });
    await trainer.fit(
      Dataset.fromFields({
        input: { data: inputs, shape: [samples] },
        target: { data: target, shape: [samples] },
        mask: { data: mask, shape: [samples] },
      }),
    );
    const state = await trainer.stateDict();
    expect((state.weight.data as Float32Array)[0]).to.be.closeTo(3, 0.1);
    expect((state.bias.data as Float32Array)[0]).to.be.closeTo(1, 0.1);
  });

  it('finds NaN in inputs when asked to, naming the field and the step', async () => {
    const { input, target } = blobDataset(32).fields();
    (input.data as Float32Array)[4 * 20 + 1] = NaN;
    const data = Dataset.fromFields({ input, target });
    const error = await rejectionOf(blobTrainer({ checkFiniteInputs: true, shuffle: false, batchSize: 8 }).fit(data));
    expect(error.code).to.equal('ERR_FIREBRAND_NON_FINITE');
    expect(error.message).to.equal(
      "epoch 1, step 3: field 'input' holds NaN or Inf in dataset sample 20 (checkFiniteInputs)",
    );
    // Unchecked, the NaN reaches the loss and the non-finite loss policy stops training, pointing here.
    const unchecked = await rejectionOf(blobTrainer({ shuffle: false, batchSize: 8 }).fit(data));
    expect(unchecked.message)
      .to.contain('non-finite loss')
      .and.contain('set checkFiniteInputs: true to name the sample');
  });

  it("names the first batch's first sample by its dataset index, as any other", async () => {
    const { input, target } = blobDataset(32).fields();
    const data = Dataset.fromFields({ input, target });
    const first = data.batchOrder({ batchSize: 8, seed: 5 })[0][0];
    (input.data as Float32Array)[4 * first] = Infinity;
    const poisoned = Dataset.fromFields({ input, target });
    const error = await rejectionOf(blobTrainer({ checkFiniteInputs: true, batchSize: 8, seed: 5 }).fit(poisoned));
    expect(error.message).to.equal(
      `epoch 1, step 1: field 'input' holds NaN or Inf in dataset sample ${first} (checkFiniteInputs)`,
    );
  });

  it('allocates fields that JavaScript fills in place, shared with C++ without a copy', async () => {
    const { dataset, arrays } = Dataset.allocate({
      input: { dtype: 'float32', shape: [64, 4] },
      target: { dtype: 'int64', shape: [64] },
    });
    const { inputs, labels } = makeBlobs(64);
    (arrays.input as Float32Array).set(inputs);
    (arrays.target as BigInt64Array).set(Array.from(labels, BigInt));
    expect(Array.from(dataset.fields().input.data as Float32Array)).to.deep.equal(Array.from(inputs));
    const history = await blobTrainer({ numEpochs: 4 }).fit(dataset);
    expect(history.epochs[3].accuracy).to.be.greaterThan(0.95);
    expect(errorOf(() => Dataset.allocate({ input: { dtype: 'float16' as 'float32', shape: [2] } })).message).to.equal(
      "input.dtype must be one of float32, float64, int32, int64, int16, int8, uint8, got 'float16'",
    );
  });

  it('rejects fields of different lengths and empty datasets', () => {
    expect(
      errorOf(() =>
        Dataset.fromFields({
          input: { data: new Float32Array(6), shape: [3, 2] },
          mask: { data: new Float32Array(2), shape: [2] },
        }),
      ).message,
    ).to.equal(
      'dataset: fields input [3, 2], mask [2] hold different numbers of samples; their first dimensions must match',
    );
    expect(errorOf(() => Dataset.fromFields({ input: { data: new Float32Array(0), shape: [0, 2] } })).message).to.equal(
      'dataset: it holds no samples (input [0, 2])',
    );
    expect(errorOf(() => Dataset.fromFields({})).message).to.equal(
      "dataset: it needs at least one field, such as 'input'",
    );
  });
});
