// The options' one owner: every field's rule and default live in a schema
// (config-schema.ts, data/loader-options.ts, objective-schemas.ts); C++ takes
// what they accept, the README's table and --help come from them.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  Dataset,
  decodeImage,
  defaultConfig,
  imageTransforms,
  type ImageTransformSpec,
  LSTM,
  LSTMSpec,
  MultiheadAttention,
  MultiheadAttentionSpec,
  nn,
  RNN,
  RNNSpec,
  Tensor,
} from '../src';
import { csvOptionsSchema, idxOptionsSchema, transformSchemas } from '../src/data/data-schemas';
import { imageTransformSchemas } from '../src/images/image-transforms';
import { batchOrderSchema, loaderSchema } from '../src/data/loader-options';
import type { NativeEngine } from '../src/native';
import { Field, fieldsOf, REQUIRED, resolve } from '../src/options/schema';
import { layers } from '../src/nn/layer-schemas';
import { losses, optimizers, schedulers } from '../src/training/objective-schemas';
import { configSchema } from '../src/training/config-schema';
import { blobDataset, blobTrainer, freePort, idxFile } from './support/helpers';

const root = path.join(__dirname, '..', '..');

/** { a: { b: value } } for the path 'a.b'. */
function nested(fieldPath: string, value: unknown): Record<string, unknown> {
  return fieldPath
    .split('.')
    .reverse()
    .reduce<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

// Fields a fit does not hand to C++ (paths, logging, checkpoint policy), or that
// need another setting: each is sent with the config it needs.
const companions: Record<string, Record<string, unknown>> = {
  saveEvery: { outputDir: 'OUT' },
  saveTotalLimit: { outputDir: 'OUT' },
  loggers: { outputDir: 'OUT' },
  loadBestModelAtEnd: { outputDir: 'OUT' },
  evalEvery: {},
};

describe('config schema', () => {
  it('gives every field a rule, a default (or none, said so) and values at its bounds', () => {
    const fields = fieldsOf(configSchema);
    expect(fields.length).to.be.above(40);
    for (const [name, entry] of fields) {
      expect(entry, name).to.be.instanceOf(Field);
      expect(entry.rule(Symbol('nothing')), `${name} rejects nonsense`).to.be.a('string');
      expect(entry.defaultText, name).to.not.equal('');
      for (const sample of entry.samples)
        expect(entry.rule(sample), `${name} accepts ${String(sample)}`).to.equal(undefined);
    }
    // defaultConfig() holds every field, nested ones too, each from the schema.
    const defaults = defaultConfig() as unknown as Record<string, unknown>;
    for (const [name, entry] of fields) {
      const value = name
        .split('.')
        .reduce<unknown>((object, key) => (object as Record<string, unknown>)[key], defaults);
      if (typeof entry.fallback !== 'function') expect(value, name).to.deep.equal(entry.fallback);
    }
    expect((defaultConfig().gradScaler as { enabled: boolean }).enabled).to.equal(false);
    expect((resolve({ mixedPrecision: 'fp16' }, configSchema).gradScaler as { enabled: boolean }).enabled).to.equal(
      true,
    );
    expect(resolve({ batchSize: 7 }, configSchema).evalBatchSize).to.equal(7);
  });

  it('what TypeScript accepts, C++ accepts: a fit with every field at each of its bounds', async function () {
    this.timeout(120000);
    const data = blobDataset(32);
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-schema-'));
    let fits = 0;
    for (const [name, entry] of fieldsOf(configSchema)) {
      if (name.startsWith('distributed.')) continue; // joined below: a fit alone never reads them
      for (const sample of entry.samples) {
        const extra = Object.fromEntries(
          Object.entries(companions[name] ?? {}).map(([key, value]) => [
            key,
            value === 'OUT' ? path.join(outputDir, String(fits)) : value,
          ]),
        );
        const trainer = blobTrainer({ numEpochs: 1, maxSteps: 2, ...extra, ...nested(name, sample) } as never);
        await trainer.fit(data, { evalData: name === 'evalEvery' || name === 'metricForBestModel' ? data : undefined });
        expect(trainer.globalStep, `${name}: ${JSON.stringify(sample)}`).to.be.above(0);
        fits += 1;
      }
    }
    expect(fits).to.be.above(45);
    fs.rmSync(outputDir, { recursive: true, force: true });
  });

  it('what TypeScript accepts for distributed, C++ accepts: one rank joins with its values', async function () {
    this.timeout(60000);
    // A process joins one run only: each field has one sample, all sent together.
    const fields = fieldsOf(configSchema).filter(([field]) => field.startsWith('distributed.'));
    expect(fields.map(([, entry]) => entry.samples.length)).to.deep.equal([1, 1, 1, 1, 1, 1]);
    const distributed = Object.fromEntries(fields.map(([name, entry]) => [name.split('.')[1], entry.samples[0]]));
    const trainer = blobTrainer({ distributed } as never);
    await trainer.setup();
    const engine = (trainer as unknown as { engine: NativeEngine }).engine;
    const joined = await engine.distribute({
      rank: 0,
      worldSize: 1,
      masterAddr: '127.0.0.1',
      agentStorePrefix: '',
      masterPort: await freePort(),
      ...trainer.config.distributed,
    });
    expect(joined).to.include({ rank: 0, worldSize: 1, backend: 'gloo' });
  });

  it('what TypeScript accepts for dataset.batches() and batchOrder(), C++ accepts', async () => {
    const data = blobDataset(64);
    for (const [schema, load] of [
      [loaderSchema, (options: object) => data.batches(options).drain()],
      [batchOrderSchema, async (options: object) => ({ batches: data.batchOrder(options).length })],
    ] as const) {
      for (const [name, entry] of fieldsOf(schema)) {
        for (const sample of entry.samples) {
          const result = await load({ [name]: sample });
          expect(result.batches, `${name}: ${JSON.stringify(sample)}`).to.be.at.least(0);
        }
      }
    }
  });

  it('what TypeScript accepts for layers, losses, optimizers and schedules, C++ builds: each field at each of its bounds', async function () {
    this.timeout(60000);
    // Recurrent and attention layers take or return several tensors: they run in a module's forward.
    const layerIn = (spec: { type: string }) =>
      spec.type === 'lstm'
        ? new LSTM(spec as LSTMSpec)
        : spec.type === 'multiheadAttention'
          ? new MultiheadAttention(spec as MultiheadAttentionSpec)
          : new RNN(spec as RNNSpec);
    const inModule = (spec: { type: string }) =>
      new (class Wrapped extends nn.Module {
        layer = layerIn(spec);
        forward(x: Tensor): Tensor {
          return this.layer instanceof MultiheadAttention ? this.layer.forward(x, x, x)[0] : this.layer.forward(x)[0];
        }
      })();
    const kinds = [
      [
        layers,
        (spec: { type: string }) => ({
          model: ['lstm', 'gru', 'rnn', 'multiheadAttention'].includes(spec.type)
            ? inModule(spec)
            : { type: 'sequential', layers: [spec] },
        }),
      ],
      [losses, (spec: object) => ({ loss: spec })],
      [optimizers, (spec: object) => ({ optimizer: spec })],
      [schedulers, (spec: object) => ({ lrScheduler: spec })],
    ] as const;
    // Layers whose valid specs need fields beyond the required ones: upsample takes exactly one
    // of size and scaleFactor (its base has scaleFactor, which a size sample replaces), and
    // alignCorners only in mode 'bilinear'.
    const bases: Record<string, Record<string, unknown>> = { upsample: { scaleFactor: 2, mode: 'bilinear' } };
    const replaces: Record<string, string> = { size: 'scaleFactor' };
    let built = 0;
    for (const [variants, place] of kinds) {
      for (const [name, schema] of Object.entries(variants.variants)) {
        const required = Object.fromEntries(
          fieldsOf(schema)
            .filter(([, entry]) => entry.fallback === REQUIRED)
            .map(([field, entry]) => [field, entry.samples[0]]),
        );
        const tag = { [variants.tag]: name };
        const base = { ...tag, ...required, ...bases[name] };
        const withSample = (field: string, sample: unknown) => {
          const spec: Record<string, unknown> = { ...base, [field]: sample };
          if (bases[name] && replaces[field]) delete spec[replaces[field]];
          return spec;
        };
        const specs = [
          base,
          ...fieldsOf(schema).flatMap(([field, entry]) => entry.samples.map((sample) => withSample(field, sample))),
        ];
        for (const spec of specs) {
          const trainer = blobTrainer({}, place(spec as { type: string }) as never);
          await trainer.setup();
          built += 1;
        }
      }
    }
    expect(built).to.be.above(130);
  });

  it('what TypeScript accepts for image transforms, C++ reads: each field at each of its bounds', async () => {
    const jpeg = fs.readFileSync(path.join(root, 'test', 'fixtures', 'images', 'rgb.jpg'));
    let read = 0;
    for (const [name, schema] of Object.entries(imageTransformSchemas.variants)) {
      const required = Object.fromEntries(
        fieldsOf(schema)
          .filter(([, entry]) => entry.fallback === REQUIRED)
          .map(([field, entry]) => [field, entry.samples[0]]),
      );
      // normalize takes floats, as v2's does.
      const before: ImageTransformSpec[] = name === 'normalize' ? [imageTransforms.toDtype('float32')] : [];
      const samples = fieldsOf(schema).flatMap(([field, entry]) =>
        entry.samples.map((sample) => ({ [field]: sample })),
      );
      for (const sample of [{}, ...samples]) {
        const spec = { name, ...required, ...sample } as ImageTransformSpec;
        const image = await decodeImage(jpeg, { transforms: [...before, spec] });
        expect(image.shape.length, JSON.stringify(spec)).to.equal(3);
        read += 1;
      }
    }
    expect(read).to.be.above(20);
  });

  it('what TypeScript accepts for transforms and data files, C++ reads: each field at each of its bounds', async () => {
    const data = blobDataset(8);
    let read = 0;
    for (const [name, schema] of Object.entries(transformSchemas.variants)) {
      const required = Object.fromEntries(
        fieldsOf(schema)
          .filter(([, entry]) => entry.fallback === REQUIRED)
          .map(([field, entry]) => [field, entry.samples[0]]),
      );
      for (const [field, entry] of fieldsOf(schema)) {
        for (const sample of entry.samples) {
          expect(data.withTransforms({ name, ...required, [field]: sample } as never).length).to.equal(8);
          read += 1;
        }
      }
    }
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-schema-files-'));
    const images = path.join(folder, 'images.idx');
    const labels = path.join(folder, 'labels.idx');
    fs.writeFileSync(images, idxFile(0x08, [3, 2, 2], Buffer.alloc(12, 7)));
    fs.writeFileSync(labels, idxFile(0x08, [3], Buffer.from([0, 1, 2])));
    const csv = path.join(folder, 'table.csv');
    fs.writeFileSync(csv, 'a,label\n1,1\n0,0\n');
    for (const [schema, load] of [
      [idxOptionsSchema, (options: object) => Dataset.fromIdx(images, labels, options)],
      [csvOptionsSchema, (options: object) => Dataset.fromCsv(csv, options)],
    ] as const) {
      for (const [field, entry] of fieldsOf(schema)) {
        for (const sample of entry.samples) {
          expect((await load({ [field]: sample })).length, `${field}: ${JSON.stringify(sample)}`).to.be.above(1);
          read += 1;
        }
      }
    }
    fs.rmSync(folder, { recursive: true });
    expect(read).to.be.above(20);
  });
});
