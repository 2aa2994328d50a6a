// Batches that live in JavaScript (a database cursor, an HTTP stream,
// tokenized text), streamed into the C++ epoch through a bounded queue.
import { firebrandError } from '../errors';
import { native, NativeBatchQueue, type TensorFields } from '../native';

/** Where an epoch's batches come from: an async iterable or a plain iterable of batches. */
export type BatchSource = AsyncIterable<TensorFields> | Iterable<TensorFields>;

export interface StreamingDatasetOptions {
  /** Batches held in the queue between the producer and training; a full queue pauses the producer. Default 4. */
  queueDepth?: number;
  /**
   * Batches the source gives per epoch, when known: shows progress and lets schedules that decay
   * to an end (linear, cosine, onecycle) plan the run. Default: unknown.
   */
  batchesPerEpoch?: number;
}

export class StreamingDataset {
  readonly queueDepth: number;
  readonly batchesPerEpoch: number | undefined;

  /**
   * `source(epoch)` gives a fresh source of batches for each epoch. Each batch is an object of fields
   * ({ input: { data, shape }, target: { data, shape } }), samples first, copied into C++ as it is
   * queued. Errors the source throws reject fit or evaluate; when training stops early the source's
   * iterator is closed (its `finally` blocks run).
   */
  constructor(
    private readonly source: (epoch: number) => BatchSource,
    options: StreamingDatasetOptions = {},
  ) {
    if (typeof source !== 'function') {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'StreamingDataset: source must be a function (epoch) => an (async) iterable of batches',
      );
    }
    this.queueDepth = options.queueDepth ?? 4;
    this.batchesPerEpoch = options.batchesPerEpoch;
  }

  /**
   * @internal Runs `consume` (an epoch or an evaluation reading the queue) while this epoch's batches
   * are pushed into it; a producer's error is what the caller sees.
   */
  async stream<Result>(epoch: number, consume: (queue: NativeBatchQueue) => Promise<Result>): Promise<Result> {
    const queue = new native.NativeBatchQueue(this.queueDepth, this.batchesPerEpoch);
    const consumed = consume(queue);
    const producerError = await this.pump(queue, epoch);
    try {
      return await consumed;
    } catch (error) {
      throw producerError ?? error;
    }
  }

  /** Pushes the epoch's batches until the source ends or the consumer closes; returns the producer's error. */
  private async pump(queue: NativeBatchQueue, epoch: number): Promise<unknown> {
    try {
      for await (const batch of this.source(epoch)) {
        if (queue.closed) break;
        // Leaving the loop early calls the iterator's return(): the producer is closed.
        if (!queue.push(batch) && !(await queue.waitForRoom())) break;
      }
      queue.finish();
      return undefined;
    } catch (error) {
      queue.fail(error instanceof Error ? error.message : String(error));
      return error;
    }
  }
}
