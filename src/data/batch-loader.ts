// One epoch's batches of a Dataset, loaded in C++ exactly as training loads
// them (order, shards, transforms, background workers), read from JavaScript.
import type { NativeLoader, TensorFields } from '../native';

export interface LoaderOptions {
  batchSize?: number;
  shuffle?: boolean;
  dropLast?: boolean;
  seed?: number;
  epoch?: number;
  /** Batches of the epoch to skip, as a resumed run does. */
  startBatch?: number;
  rank?: number;
  worldSize?: number;
  /** Background threads assembling batches; 0: on the calling pool thread. Default 'auto': one when the data has transforms, else 0. */
  numWorkers?: number | 'auto';
  prefetchFactor?: number;
}

export interface DrainResult {
  batches: number;
  samples: number;
  seconds: number;
}

export class BatchLoader implements AsyncIterableIterator<TensorFields> {
  /** @internal */
  constructor(private readonly native: NativeLoader) {}

  /** Batches in the whole epoch (including any skipped by startBatch). */
  get batchCount(): number {
    return this.native.batchCount;
  }

  async next(): Promise<IteratorResult<TensorFields>> {
    const batch = await this.native.next();
    return batch === undefined ? { done: true, value: undefined } : { done: false, value: batch };
  }

  async return(): Promise<IteratorResult<TensorFields>> {
    this.native.close();
    return { done: true, value: undefined };
  }

  /** Loads the remaining batches in C++ without handing them to JavaScript: the loader's own speed. */
  async drain(): Promise<DrainResult> {
    return this.native.drain();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<TensorFields> {
    return this;
  }
}
