// Small data sets, trainers and stand-in binaries shared by the tests.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Dataset, nn, Trainer, TrainerConfig, TrainerOptions } from '../../src';
import { PREBUILD_BINARY, PREBUILD_MANIFEST } from '../../src/native-loader';
import { seededRandom } from '../../examples/shared/seeded-random';

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), as the examples draw them. */
export { seededRandom };

/** Two well-separated Gaussian-ish blobs in `features` dimensions, labels 0/1. */
export function makeBlobs(samples: number, features = 4, seed = 1): { inputs: Float32Array; labels: Int32Array } {
  const random = seededRandom(seed);
  const inputs = new Float32Array(samples * features);
  const labels = new Int32Array(samples);
  for (let i = 0; i < samples; i++) {
    labels[i] = i % 2;
    for (let j = 0; j < features; j++) {
      const noise = random() + random() + random() - 1.5;
      inputs[i * features + j] = (labels[i] === 1 ? 1.5 : -1.5) + noise;
    }
  }
  return { inputs, labels };
}

export function blobDataset(samples = 256, features = 4, seed = 1): Dataset {
  const { inputs, labels } = makeBlobs(samples, features, seed);
  return Dataset.fromArrays({ inputs, inputShape: [samples, features], targets: labels });
}

export function blobTrainer(config: Partial<TrainerConfig> = {}, overrides: Partial<TrainerOptions> = {}): Trainer {
  return new Trainer({
    model: nn.sequential(nn.linear(4, 16), nn.relu(), nn.linear(16, 2)),
    loss: 'cross_entropy',
    optimizer: { name: 'sgd', lr: 0.1, momentum: 0.9 },
    config: { numEpochs: 3, batchSize: 16, progressBar: false, numThreads: 1, ...config },
    ...overrides,
  });
}

/** Resolves with the rejection of `promise`, failing if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the promise to reject, but it resolved');
}

/** The error of making a trainer and setting it up (config errors throw, model errors reject). */
export async function setupError(make: () => Trainer): Promise<Error & { code?: string }> {
  let trainer: Trainer;
  try {
    trainer = make();
  } catch (error) {
    return error as Error & { code?: string };
  }
  return rejectionOf(trainer.setup());
}

/**
 * Runs a Python script with torch (BENCH_PYTHON, else /usr/bin/python3) and returns its stdout parsed
 * as JSON; without torch it prints why and skips `test`.
 */
export function pythonJson(test: Mocha.Context, script: string, ...args: string[]): unknown {
  const python = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
  if (spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8' }).status !== 0) {
    console.log(`      skipped: ${python} has no torch module (apt-get install python3-torch)`);
    test.skip();
  }
  const result = spawnSync(python, ['-c', script, ...args], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`python exited with ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The error thrown by `body`, failing if it does not throw. */
export function errorOf(body: () => unknown): Error & { code?: string } {
  try {
    body();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a thrown error, but none was thrown');
}

/**
 * A stand-in prebuild in `folder` (binary and manifest) for libtorch `torchVersion`, linked against a
 * libtorch_cpu.so.<torchVersion> that is removed again, so that it cannot load. Returns that library's name.
 */
export function writeUnloadablePrebuild(folder: string, torchVersion: string): string {
  fs.mkdirSync(folder, { recursive: true });
  const source = path.join(folder, 'stub.c');
  fs.writeFileSync(source, 'int firebrand_stub(void) { return 0; }\n');
  const soname = `libtorch_cpu.so.${torchVersion}`;
  const library = path.join(folder, soname);
  execFileSync('gcc', ['-shared', '-fPIC', `-Wl,-soname,${soname}`, '-o', library, source]);
  execFileSync('gcc', [
    '-shared',
    '-fPIC',
    '-Wl,--no-as-needed',
    '-o',
    path.join(folder, PREBUILD_BINARY),
    source,
    library,
  ]);
  fs.rmSync(library);
  fs.rmSync(source);
  const manifest = { torchVersion, libtorchSource: 'the system libtorch', cuda: false };
  fs.writeFileSync(path.join(folder, PREBUILD_MANIFEST), JSON.stringify(manifest));
  return soname;
}

/** A TCP port free on 127.0.0.1 right now (a rendezvous store's): launch --standalone's own pick. */
export { freePort } from '../../src/cli/launch-command';

/** An IDX file (MNIST's format): the element type's code (0x08 unsigned bytes), dimensions, then `data`. */
export function idxFile(typeCode: number, shape: number[], data: Buffer): Buffer {
  const header = Buffer.alloc(4 + 4 * shape.length);
  header.writeUInt8(typeCode, 2);
  header.writeUInt8(shape.length, 3);
  shape.forEach((size, axis) => header.writeUInt32BE(size, 4 + 4 * axis));
  return Buffer.concat([header, data]);
}

/** Every item of an async iterable (generated tokens, streamed chunks, loader batches), in order. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
