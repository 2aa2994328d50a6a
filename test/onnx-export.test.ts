// exportOnnx against real runtimes: each model's file runs in onnxruntime-node
// (and, where installed, Python's onnxruntime after onnx.checker's full check)
// and must give firebrand's predict outputs. Batch and sequence sizes differ
// from the example's, so the dynamic axes are exercised too.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import * as ort from 'onnxruntime-node';

import {
  Dataset,
  fromPretrained,
  Model,
  nn,
  readCsv,
  TablePreprocessor,
  Tensor,
  torch,
  torchvision,
  Trainer,
  type ExampleShape,
  type Module,
  type NumericArray,
  type TensorData,
} from '../src';
import { DemoCnn, demoCnn } from '../scripts/fashion-mnist';
import { GPTMini } from '../examples/models/gpt';
import { AttentionClassifier } from './models/attention';
import { Functional } from './models/functional';
import { GRURegressor, LSTMClassifier, PackedRecurrent } from './models/recurrent';
import { TiedLM } from './models/tied-lm';
import { TransformerModel } from './models/transformer';
import { UNet } from './models/unet';
import { expectClose } from './support/expect-close';
import { idxFile, rejectionOf, seededRandom } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures');
type Feed = TensorData<NumericArray> | { data: string[]; shape: number[] };
type Fields = Record<string, Feed>;
interface CheckedFile {
  file: string;
  inputs: Fields;
  expected: Record<string, TensorData<NumericArray>>;
  tolerance: number;
}

/** Tokens below `vocabulary`, as int64. */
function tokens(shape: number[], vocabulary: number, seed: number): TensorData<BigInt64Array> {
  const random = seededRandom(seed);
  const size = shape.reduce((a, b) => a * b, 1);
  return { data: BigInt64Array.from({ length: size }, () => BigInt(Math.floor(random() * vocabulary))), shape };
}

function floats(shape: number[], seed: number): TensorData<Float32Array> {
  const random = seededRandom(seed);
  const size = shape.reduce((a, b) => a * b, 1);
  return { data: Float32Array.from({ length: size }, () => random() * 2 - 1), shape };
}

function ortTensor({ data, shape }: Feed): ort.Tensor {
  if (Array.isArray(data)) return new ort.Tensor('string', data, shape);
  if (data instanceof Float64Array) return new ort.Tensor('float64', data, shape);
  if (data instanceof BigInt64Array) return new ort.Tensor('int64', data, shape);
  if (data instanceof Int32Array) return new ort.Tensor('int32', data, shape);
  if (data instanceof Float32Array) return new ort.Tensor('float32', data, shape);
  if (data instanceof Uint8Array) return new ort.Tensor('uint8', data, shape);
  throw new Error(`no onnxruntime tensor for ${data.constructor.name}`);
}

function jsonTensor({ data, shape }: Feed) {
  if (Array.isArray(data)) return { data, shape, dtype: 'str' };
  if (data instanceof Float64Array) return { data: Array.from(data), shape, dtype: 'float64' };
  const dtype =
    data instanceof BigInt64Array
      ? 'int64'
      : data instanceof Int32Array
        ? 'int32'
        : data instanceof Uint8Array
          ? 'uint8'
          : 'float32';
  return { data: Array.from(data as ArrayLike<number | bigint>, Number), shape, dtype };
}

class LengthsClassifier extends nn.Module {
  embed = nn.embedding(20, 8);
  lstm = nn.lstm(8, 6, { numLayers: 2, batchFirst: true, bidirectional: true });
  head = nn.linear(12, 3);
  override inputFields(): string[] {
    return ['tokens', 'lengths'];
  }
  forward(tokenIds: Tensor, lengths: Tensor): Tensor {
    const [, [h]] = this.lstm.forward(this.embed.forward(tokenIds), null, { lengths });
    return this.head.forward(torch.cat([h.select(0, -2), h.select(0, -1)], 1));
  }
}

describe('exportOnnx: onnxruntime runs the file and gives predict’s outputs', function () {
  this.timeout(600_000);
  let folder: string;
  const written: CheckedFile[] = [];

  before(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-onnx-'));
  });
  after(() => fs.rmSync(folder, { recursive: true, force: true }));

  /** Exports, runs `inputs` in onnxruntime-node and compares every output with `expected`. */
  async function checkFile(
    name: string,
    exported: (file: string) => Promise<void>,
    inputs: Fields,
    expected: Record<string, TensorData<NumericArray>>,
    tolerance: number,
  ): Promise<void> {
    const file = path.join(folder, `${name}.onnx`);
    await exported(file);
    const session = await ort.InferenceSession.create(file);
    const outputs = await session.run(Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, ortTensor(v)])));
    expect(Object.keys(outputs).sort()).to.deep.equal(Object.keys(expected).sort());
    for (const [output, want] of Object.entries(expected)) {
      const got = outputs[output];
      expectClose({ data: got.data as Float32Array, shape: got.dims.map(Number) }, want, `${name} ${output}`, {
        tolerance,
      });
    }
    written.push({ file, inputs, expected, tolerance });
  }

  it('the demo CNN, as nn.sequential and as a module of F ops, at another batch size than the example', async () => {
    for (const [name, model] of [
      ['demo-cnn', demoCnn()],
      ['demo-cnn-module', new DemoCnn()],
    ] as const) {
      const trainer = new Trainer({ model, loss: 'cross_entropy', optimizer: 'adamw', config: { seed: 1 } });
      const input = floats([5, 1, 28, 28], 2);
      const expected = await trainer.predict(input.data, input.shape);
      const exported = (file: string) => trainer.exportOnnx(file, { example: { shape: [2, 1, 28, 28] } });
      await checkFile(name, exported, { input }, { output: expected }, 1e-5);
    }
  });

  it('batch norm, average pooling, GELU and GroupNorm layers, at opsets 17 and 18', async () => {
    const trainer = new Trainer({
      model: nn.sequential(
        nn.conv2d(3, 8, 3, { padding: 1 }),
        nn.batchNorm2d(8),
        nn.gelu(),
        nn.avgPool2d(2),
        nn.groupNorm(2, 8),
        nn.flatten(),
        nn.linear(8 * 4 * 4, 4),
      ),
      loss: 'cross_entropy',
      optimizer: 'adamw',
    });
    const input = floats([3, 3, 8, 8], 9);
    const expected = await trainer.predict(input.data, input.shape);
    for (const opset of [17, 18]) {
      const exported = (file: string) => trainer.exportOnnx(file, { example: { shape: [2, 3, 8, 8] }, opset });
      await checkFile(`norms-opset${opset}`, exported, { input }, { output: expected }, 1e-5);
    }
  });

  it("torchvision's ResNet-18 through Model.load, its image sizes dynamic too", async () => {
    const trainer = new Trainer({
      model: torchvision.models.resnet18({ numClasses: 7 }),
      loss: 'cross_entropy',
      optimizer: 'adamw',
    });
    const saved = path.join(folder, 'resnet18');
    await trainer.save(saved);
    const model = await Model.load(saved);
    const input = floats([3, 3, 64, 64], 3);
    const expected = await model.predict(input.data, input.shape);
    await checkFile(
      'resnet18',
      (file) =>
        model.exportOnnx(file, {
          example: { shape: [2, 3, 32, 32] },
          dynamicAxes: { input: { 0: 'batch', 2: 'height', 3: 'width' } },
        }),
      { input },
      {
        output: expected,
      },
      1e-5,
    );
  });

  it("a ViT (Hugging Face's ViTForImageClassification): patches, attention, the class token", async () => {
    const trainer = new Trainer({
      model: await fromPretrained(path.join(fixtures, 'pretrained', 'vit')),
      loss: 'cross_entropy',
      optimizer: 'adamw',
    });
    const input = floats([3, 3, 8, 8], 4);
    const expected = await trainer.predict(input.data, input.shape);
    await checkFile(
      'vit',
      (file) => trainer.exportOnnx(file, { example: { shape: [2, 3, 8, 8] } }),
      { input },
      {
        output: expected,
      },
      1e-4,
    );
  });

  it('a GPT-2 forward over a full context, at other batch and sequence sizes than the example', async () => {
    const trainer = new Trainer({
      model: await fromPretrained(path.join(fixtures, 'pretrained', 'gpt2')),
      loss: 'cross_entropy',
      optimizer: 'adamw',
    });
    const input = tokens([3, 32], 50, 5);
    const expected = await trainer.predict(input.data, input.shape);
    await checkFile(
      'gpt2',
      (file) => trainer.exportOnnx(file, { example: { shape: [2, 8], dtype: 'int64' } }),
      { input },
      { output: expected },
      1e-4,
    );
  });

  it('an LSTM classifier taking lengths, and packed LSTM/GRU layers whose lengths forward computes', async () => {
    const classifier = new Trainer({
      model: new LengthsClassifier(),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { seed: 2 },
    });
    const inputs = {
      tokens: tokens([4, 9], 20, 6),
      lengths: { data: BigInt64Array.from([9n, 3n, 1n, 6n]), shape: [4] },
    };
    const expected = await classifier.predict(inputs);
    await checkFile(
      'lstm-lengths',
      (file) =>
        classifier.exportOnnx(file, {
          example: { tokens: tokens([2, 5], 20, 7), lengths: { data: BigInt64Array.from([5n, 2n]), shape: [2] } },
        }),
      inputs,
      { output: expected },
      1e-5,
    );

    const packed = new Trainer({
      model: new PackedRecurrent(),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { seed: 3 },
    });
    const input = tokens([5, 7], 12, 8);
    await checkFile(
      'packed-recurrent',
      (file) => packed.exportOnnx(file, { example: { shape: [2, 4], dtype: 'int64' } }),
      { input },
      { output: await packed.predict(input.data, input.shape) },
      1e-5,
    );
  });

  it("the golden tests' module zoo: F ops of every dimension with dict outputs, U-Net, tied LM, recurrent, GPT-mini, multi-head attention, transformer", async () => {
    const zoo: [string, Module, Fields, ExampleShape, Record<number, string>, number][] = [
      ['functional', new Functional(), { input: floats([2, 4, 16], 10) }, { shape: [2, 4, 16] }, {}, 1e-4],
      [
        'unet',
        new UNet(3, 2, 8),
        { input: floats([3, 3, 16, 16], 11) },
        { shape: [2, 3, 16, 16] },
        { 0: 'batch' },
        1e-5,
      ],
      [
        'tied-lm',
        new TiedLM(),
        { input: tokens([3, 6], 16, 12) },
        { shape: [2, 4], dtype: 'int64' },
        { 0: 'b', 1: 't' },
        1e-5,
      ],
      [
        'lstm',
        new LSTMClassifier(),
        { input: tokens([3, 7], 12, 13) },
        { shape: [2, 5], dtype: 'int64' },
        { 0: 'b', 1: 't' },
        1e-5,
      ],
      ['gru-rnn', new GRURegressor(), { input: floats([3, 6, 5], 14) }, { shape: [2, 4, 5] }, { 0: 'b', 1: 't' }, 1e-5],
      [
        'gpt-mini',
        new GPTMini(),
        { input: tokens([3, 8], 16, 15) },
        { shape: [2, 5], dtype: 'int64' },
        { 0: 'b', 1: 't' },
        1e-4,
      ],
      [
        'mha',
        new AttentionClassifier(),
        { input: tokens([3, 6], 12, 16) },
        { shape: [2, 4], dtype: 'int64' },
        { 0: 'b', 1: 't' },
        1e-4,
      ],
      [
        'transformer',
        new TransformerModel(),
        { input: tokens([3, 6], 12, 17) },
        { shape: [2, 4], dtype: 'int64' },
        { 0: 'b', 1: 't' },
        1e-4,
      ],
    ];
    for (const [name, model, inputs, example, axes, tolerance] of zoo) {
      const trainer = new Trainer({ model, loss: 'mse', optimizer: 'adamw', config: { seed: 6 } });
      const input = inputs.input as TensorData<NumericArray>;
      const predicted = await trainer.predict(input.data, input.shape);
      const expected =
        'data' in predicted
          ? { output: predicted as TensorData<NumericArray> }
          : (predicted as Record<string, TensorData<NumericArray>>);
      const exported = (file: string) => trainer.exportOnnx(file, { example, dynamicAxes: { input: axes } });
      await checkFile(name, exported, inputs, expected, tolerance);
    }
  });

  it("a Llama (Hugging Face's LlamaForCausalLM): RMSNorm, rotary embeddings, grouped-query attention", async () => {
    const trainer = new Trainer({
      model: await fromPretrained(path.join(fixtures, 'pretrained', 'llama')),
      loss: 'cross_entropy',
      optimizer: 'adamw',
    });
    const input = tokens([2, 12], 50, 18);
    const expected = await trainer.predict(input.data, input.shape);
    const exported = (file: string) => trainer.exportOnnx(file, { example: { shape: [2, 5], dtype: 'int64' } });
    await checkFile('llama', exported, { input }, { output: expected }, 1e-4);
  });

  it("BERT (BertForSequenceClassification: three inputs by name, a padding mask) and torchvision's MobileNetV3", async () => {
    const bert = new Trainer({
      model: await fromPretrained(path.join(fixtures, 'pretrained', 'bert-classifier')),
      loss: 'cross_entropy',
      optimizer: 'adamw',
    });
    const ids = tokens([3, 10], 50, 19);
    const mask = {
      data: BigInt64Array.from({ length: 30 }, (_, i) => (i % 10 < 10 - (i % 3) * 3 ? 1n : 0n)),
      shape: [3, 10],
    };
    const types = { data: BigInt64Array.from({ length: 30 }, (_, i) => (i % 10 >= 6 ? 1n : 0n)), shape: [3, 10] };
    const inputs = { input_ids: ids, attention_mask: mask, token_type_ids: types };
    const example = {
      input_ids: { shape: [2, 4], dtype: 'int64' as const },
      attention_mask: { shape: [2, 4], dtype: 'int64' as const },
      token_type_ids: { shape: [2, 4], dtype: 'int64' as const },
    };
    await checkFile(
      'bert',
      (file) => bert.exportOnnx(file, { example }),
      inputs,
      { output: await bert.predict(inputs) },
      1e-4,
    );

    const mobilenet = new Trainer({
      model: torchvision.models.mobilenetV3Small({ numClasses: 5 }),
      loss: 'cross_entropy',
      optimizer: 'adamw',
    });
    const input = floats([3, 3, 64, 64], 20);
    const expected = await mobilenet.predict(input.data, input.shape);
    const exported = (file: string) => mobilenet.exportOnnx(file, { example: { shape: [2, 3, 64, 64] } });
    await checkFile('mobilenet-v3', exported, { input }, { output: expected }, 1e-5);
  });

  it('a tabular model trained on a preprocessed table: the example comes from its saved preprocessing', async () => {
    const table = await readCsv(path.join(fixtures, 'tables', 'passengers.csv'));
    const preprocessor = new TablePreprocessor({
      numeric: { columns: ['age', 'fare'], impute: 'mean', scale: 'standard' },
      categorical: [{ columns: ['sex', 'port', 'class'], encode: 'onehot', handleUnknown: 'ignore' }],
      target: 'survived',
    }).fit(table);
    const data = Dataset.fromTable(table, preprocessor);
    const [features] = data.fieldShapes.input;
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(features, 16), nn.batchNorm1d(16), nn.relu(), nn.linear(16, 2)),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { seed: 4, numEpochs: 2, batchSize: 8, progressBar: false },
    });
    await trainer.fit(data);
    const { input } = preprocessor.transform(table);
    await checkFile(
      'tabular',
      (file) => trainer.exportOnnx(file),
      { input },
      { output: await trainer.predict(input.data, input.shape) },
      1e-5,
    );
  });

  it('a table model with its preprocessing folded in: the file takes the raw columns, as predict takes records', async () => {
    const table = await readCsv(path.join(fixtures, 'tables', 'passengers.csv'));
    const preprocessor = new TablePreprocessor({
      numeric: { columns: ['age', 'fare'], impute: 'median', indicator: true, scale: 'minmax' },
      categorical: [
        { columns: ['sex', 'port'], encode: 'onehot', handleUnknown: 'ignore' },
        { columns: ['class'], encode: 'index', handleUnknown: 'ignore' },
      ],
      target: 'survived',
    }).fit(table.rows(Array.from({ length: 30 }, (_, i) => i)));
    const data = Dataset.fromTable(table, preprocessor);
    const [features] = data.fieldShapes.input;
    class Passengers extends nn.Module {
      embedding = nn.embedding(4, 3);
      head = nn.linear(features + 3, 2);
      override inputFields(): string[] {
        return ['input', 'categories'];
      }
      forward(input: Tensor, categories: Tensor): Tensor {
        return this.head.forward(torch.cat([input, this.embedding.forward(categories).flatten(1)], 1));
      }
    }
    const trainer = new Trainer({
      model: new Passengers(),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { seed: 4, numEpochs: 1, batchSize: 8, progressBar: false },
    });
    await trainer.fit(data);
    // The last rows (unseen at fit), a record with an unseen port and class, one with nothing but a sex.
    const records = [
      ...Array.from({ length: 10 }, (_, row) =>
        Object.fromEntries(
          ['age', 'fare', 'sex', 'port', 'class'].map((name) => {
            const cell = table.column(name)[30 + row];
            return [name, typeof cell === 'number' && Number.isNaN(cell) ? undefined : cell];
          }),
        ),
      ),
      { age: 30, fare: 10, sex: 'male', port: 'X', class: 9 },
      { sex: 'female' },
    ];
    const expected = await trainer.predict(records);
    const number = (name: string) => ({
      data: Float64Array.from(records, (record) => ((record as Record<string, unknown>)[name] as number) ?? NaN),
      shape: [records.length],
    });
    const text = (name: string) => ({
      data: records.map((record) => String((record as Record<string, unknown>)[name] ?? '')),
      shape: [records.length],
    });
    const inputs = {
      age: number('age'),
      fare: number('fare'),
      sex: text('sex'),
      port: text('port'),
      class: number('class'),
    };
    await checkFile(
      'table-raw',
      (file) => trainer.exportOnnx(file, { includePreprocessing: true }),
      inputs,
      { output: expected },
      1e-5,
    );
  });

  it("a classifier's answers as outputs: probabilities and labels as predictProba and predictLabels give them", async () => {
    const table = await readCsv(path.join(fixtures, 'tables', 'passengers.csv'));
    const preprocessor = new TablePreprocessor({
      numeric: { columns: ['age', 'fare'], impute: 'median' },
      categorical: { columns: ['sex'], handleUnknown: 'ignore' },
      target: 'survived',
    }).fit(table);
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(4, 2)),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { seed: 5, numEpochs: 2, batchSize: 8, progressBar: false },
    });
    await trainer.fit(Dataset.fromTable(table, preprocessor));
    const records = [{ age: 8, fare: 30, sex: 'female' }, { age: 60, fare: 5, sex: 'male' }, { sex: 'other' }];
    const file = path.join(folder, 'table-classes.onnx');
    await trainer.exportOnnx(file, { includePreprocessing: true, classOutputs: true });
    const session = await ort.InferenceSession.create(file);
    const outputs = await session.run({
      age: new ort.Tensor(
        'float64',
        Float64Array.from(records, (record) => record.age ?? NaN),
        [3],
      ),
      fare: new ort.Tensor(
        'float64',
        Float64Array.from(records, (record) => record.fare ?? NaN),
        [3],
      ),
      sex: new ort.Tensor(
        'string',
        records.map((record) => record.sex),
        [3],
      ),
    });
    expect(Object.keys(outputs).sort()).to.deep.equal(['label', 'output', 'probabilities']);
    const probabilities = await trainer.model.predictProba(records);
    expectClose(
      { data: outputs.probabilities.data as Float32Array, shape: outputs.probabilities.dims.map(Number) },
      probabilities,
      'probabilities',
      { tolerance: 1e-5 },
    );
    expect(Array.from(outputs.label.data as string[])).to.deep.equal(await trainer.model.predictLabels(records));
    // A model without named classes: the label is the class index.
    const plain = new Trainer({ model: nn.sequential(nn.linear(3, 4)), loss: 'cross_entropy', optimizer: 'sgd' });
    const indices = path.join(folder, 'indices.onnx');
    await plain.exportOnnx(indices, { example: { shape: [2, 3] }, classOutputs: true });
    const input = Float32Array.from([0.1, -2, 3, 1, 1, 1]);
    const answered = await (
      await ort.InferenceSession.create(indices)
    ).run({ input: new ort.Tensor('float32', input, [2, 3]) });
    expect(Array.from(answered.label.data as BigInt64Array, Number)).to.deep.equal(
      await plain.model.predictLabels(input, [2, 3]),
    );
    const refused = await rejectionOf(
      plain.exportOnnx(indices, { example: { shape: [2, 3] }, classOutputs: 'yes' as never }),
    );
    expect(refused.message).to.contain('classOutputs must be true or false');
  });

  it('a regression on standardized targets: predict and the file give the target in its own units', async () => {
    const passengers = await readCsv(path.join(fixtures, 'tables', 'passengers.csv'));
    const priced = passengers.withColumn('price', (record) =>
      record.fare === null ? null : 5000 + 2 * (record.fare as number) + (record.sex === 'male' ? 40 : 0),
    );
    const table = priced.filter((record) => record.price !== null);
    const preprocessor = new TablePreprocessor({
      numeric: { columns: ['fare'], impute: 'median', scale: 'standard' },
      categorical: { columns: ['sex'], handleUnknown: 'ignore' },
      target: { column: 'price', kind: 'value', scale: 'standard' },
    }).fit(table);
    // StandardScaler's mean_ and scale_ (population standard deviation) of the training targets.
    const prices = Array.from(table.column('price') as Float64Array);
    const mean = prices.reduce((sum, y) => sum + y, 0) / prices.length;
    const std = Math.sqrt(prices.reduce((sum, y) => sum + (y - mean) ** 2, 0) / prices.length);
    expect(preprocessor.targetScaling?.mean).to.be.closeTo(mean, 1e-9);
    expect(preprocessor.targetScaling?.scale).to.be.closeTo(std, 1e-9);
    const data = Dataset.fromTable(table, preprocessor);
    expectClose(
      data.fields().target.data,
      Float64Array.from(prices, (y) => (y - mean) / std),
      'standardized targets',
      {
        tolerance: 1e-6,
      },
    );
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(3, 1)),
      loss: 'mse',
      optimizer: { name: 'adam', lr: 0.1 },
      config: { seed: 2, numEpochs: 60, batchSize: 8, progressBar: false },
    });
    await trainer.fit(data);
    const records = [
      { fare: 10, sex: 'male' },
      { fare: 200, sex: 'female' },
      { fare: 55.5, sex: 'other' },
    ];
    const predicted = await trainer.predict(records);
    // In the target's units, near the rule the rows follow (an exact linear fit but for the unseen sex).
    expect(predicted.data[0]).to.be.closeTo(5000 + 20 + 40, 1);
    expect(predicted.data[1]).to.be.closeTo(5000 + 400, 1);
    const inputs = {
      fare: { data: Float64Array.from(records, (record) => record.fare), shape: [3] },
      sex: { data: records.map((record) => record.sex), shape: [3] },
    };
    await checkFile(
      'table-standardized-target',
      (file) => trainer.exportOnnx(file, { includePreprocessing: true }),
      inputs,
      { output: predicted },
      1e-5,
    );
    const folder2 = path.join(folder, 'standardized-target-model');
    await trainer.save(folder2);
    expect((await (await Model.load(folder2)).predict(records)).data).to.deep.equal(predicted.data);
  });

  it('a model trained on fromIdx images, its scaling and normalization folded in: the file takes raw uint8 pixels', async () => {
    const count = 12;
    const pixels = Buffer.from(Array.from({ length: count * 64 }, (_, i) => (i * 37) % 256));
    const images = path.join(folder, 'images-idx');
    const labels = path.join(folder, 'labels-idx');
    fs.writeFileSync(images, idxFile(0x08, [count, 8, 8], pixels));
    fs.writeFileSync(labels, idxFile(0x08, [count], Buffer.from(Array.from({ length: count }, (_, i) => i % 2))));
    const data = await Dataset.fromIdx(images, labels, { mean: 0.3, std: 0.2, sampleShape: [1, 8, 8] });
    const trainer = new Trainer({
      model: nn.sequential(nn.conv2d(1, 4, 3), nn.relu(), nn.flatten(), nn.linear(4 * 6 * 6, 2)),
      loss: 'cross_entropy',
      optimizer: 'adamw',
      config: { numEpochs: 1, batchSize: 4, progressBar: false, seed: 5 },
    });
    await trainer.fit(data);
    const raw = { data: Uint8Array.from(pixels.subarray(0, 3 * 64)), shape: [3, 1, 8, 8] };
    const expected = await trainer.predict(raw.data, raw.shape);
    const file = path.join(folder, 'idx-raw.onnx');
    await trainer.exportOnnx(file, { includePreprocessing: true });
    const session = await ort.InferenceSession.create(file);
    expect(session.inputNames).to.deep.equal(['input']);
    const outputs = await session.run({ input: new ort.Tensor('uint8', raw.data, raw.shape) });
    expectClose(
      { data: outputs.output.data as Float32Array, shape: outputs.output.dims.map(Number) },
      expected,
      'raw',
      {
        tolerance: 1e-5,
      },
    );
    written.push({ file, inputs: { input: raw }, expected: { output: expected }, tolerance: 1e-5 });
    // An example of raw pixels, as the file takes them, traces the model on what the transforms make of them.
    const fromRaw = path.join(folder, 'idx-raw-example.onnx');
    await trainer.exportOnnx(fromRaw, { includePreprocessing: true, example: raw });
    const again = await (
      await ort.InferenceSession.create(fromRaw)
    ).run({
      input: new ort.Tensor('uint8', raw.data, raw.shape),
    });
    expect(Array.from(again.output.data as Float32Array)).to.deep.equal(
      Array.from(outputs.output.data as Float32Array),
    );
  });

  it('passes onnx.checker with full checks, and Python’s onnxruntime gives the same outputs', function () {
    const python = '/usr/bin/python3';
    const probe = spawnSync(python, ['-c', 'import onnx, numpy'], { encoding: 'utf8' });
    if (probe.status !== 0) {
      console.log(`      skipped: ${python} has no onnx module (apt-get install python3-onnx)`);
      this.skip();
    }
    expect(written.length, 'files the tests above wrote').to.equal(24);
    const cases = path.join(folder, 'cases.json');
    fs.writeFileSync(
      cases,
      JSON.stringify(
        written.map(({ file, inputs, expected, tolerance }) => ({
          file,
          tolerance,
          inputs: Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, jsonTensor(v)])),
          expected: Object.fromEntries(Object.entries(expected).map(([k, v]) => [k, jsonTensor(v)])),
        })),
      ),
    );
    const script = path.join(__dirname, '..', '..', 'test', 'support', 'check-onnx.py');
    const run = spawnSync(python, [script, cases], { encoding: 'utf8', maxBuffer: 1 << 28 });
    expect(run.status, run.stderr).to.equal(0);
    const result = JSON.parse(run.stdout) as {
      onnx: string;
      onnxruntime?: string;
      onnxruntimeMissing?: string;
      checked: string[];
      newerOpset: string[];
      failures: unknown[];
    };
    if (result.newerOpset.length > 0) {
      console.log(
        `      onnx ${result.onnx} has no schemas for ${result.newerOpset.map((file) => path.basename(file)).join(', ')}'s opset: not checked`,
      );
    }
    if (result.onnxruntime === undefined) {
      console.log(
        `      onnx ${result.onnx} checked the files; Python's onnxruntime is missing (${result.onnxruntimeMissing})`,
      );
    }
    expect(result.failures).to.deep.equal([]);
    expect(result.checked.length + result.newerOpset.length).to.equal(written.length);
    expect(result.checked.length).to.be.at.least(written.length - 1);
  });
});

describe('exportOnnx: what cannot be exported is named, and no file is left', () => {
  it('names the module path of a layer without an ONNX form', async () => {
    class Projected extends nn.Module {
      encoder = nn.lstm(4, 6, { projSize: 3, batchFirst: true });
      forward(x: Tensor): Tensor {
        const [out] = this.encoder.forward(x);
        return out;
      }
    }
    const file = path.join(os.tmpdir(), `firebrand-unexportable-${process.pid}.onnx`);
    const trainer = new Trainer({ model: new Projected(), loss: 'mse', optimizer: 'adamw' });
    const error = await rejectionOf(trainer.exportOnnx(file, { example: { shape: [2, 3, 4] } }));
    expect(error.code).to.equal('ERR_FIREBRAND_NOT_EXPORTABLE');
    expect(error.message).to.contain('encoder');
    expect(error.message).to.contain('projSize');
    expect(fs.existsSync(file)).to.equal(false);
    expect(
      fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith(`firebrand-unexportable-${process.pid}`)),
    ).to.deep.equal([]);
  });

  it('says how a TorchScript-source model can be exported instead', async () => {
    const trainer = new Trainer({
      model: nn.torchScript(path.join(fixtures, 'scripted', 'regressor.pt')),
      loss: 'mse',
      optimizer: 'adamw',
    });
    const error = await rejectionOf(
      trainer.exportOnnx(path.join(os.tmpdir(), 'never.onnx'), { example: { shape: [2, 4] } }),
    );
    expect(error.code).to.equal('ERR_FIREBRAND_NOT_EXPORTABLE');
    expect(error.message).to.contain('torch.onnx.export');
    expect(error.message).to.contain('nn.Module');
  });

  it('refuses an opset it does not write, and a model with no example to trace', async () => {
    const trainer = new Trainer({ model: nn.sequential(nn.linear(4, 2)), loss: 'mse', optimizer: 'adamw' });
    const opset = await rejectionOf(trainer.exportOnnx('x.onnx', { opset: 13, example: { shape: [2, 4] } }));
    expect(opset.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(opset.message).to.contain('opset must be one of 17, 18');
    const example = await rejectionOf(trainer.exportOnnx('x.onnx'));
    expect(example.message).to.contain('give options.example');
    const unknown = await rejectionOf(trainer.exportOnnx('x.onnx', { example: { shape: [2, 4] }, opSet: 18 } as never));
    expect(unknown.message).to.match(/^exportOnnx options: unknown option 'opSet' \(did you mean 'opset'\?\)/);
  });

  it('makes the folder it writes into, as save does, and names the file it cannot write', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-onnx-folder-'));
    try {
      const trainer = new Trainer({ model: nn.sequential(nn.linear(4, 2)), loss: 'mse', optimizer: 'adamw' });
      const file = path.join(root, 'models', 'v1', 'model.onnx');
      await trainer.exportOnnx(file, { example: { shape: [2, 4] } });
      expect(fs.readdirSync(path.dirname(file))).to.deep.equal(['model.onnx']);
      fs.writeFileSync(path.join(root, 'taken'), '');
      const blocked = path.join(root, 'taken', 'model.onnx');
      const error = await rejectionOf(trainer.exportOnnx(blocked, { example: { shape: [2, 4] } }));
      expect(error.code).to.equal('ERR_FIREBRAND_FILE');
      expect(error.message).to.contain(`exportOnnx: cannot write ${blocked}`);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
