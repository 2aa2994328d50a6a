// Requests a server decodes together: those waiting when the model can take
// another batch, with the same sampling settings, run as one generateBatch
// (one forward per step for all of them); a few batches run at once, their
// steps taking turns on the model's thread, so a new request starts within a
// step of the ones already decoding instead of after them.
import type { GenerateOptions } from '../native';
import type { Model } from '../inference/model';

/** One sequence to decode: its prompt, sampling settings and where its tokens go. */
export interface DecodeJob {
  prompt: Int32Array;
  /** Sampling settings; jobs decode together only when these are equal. maxNewTokens is the job's own. */
  options: GenerateOptions & { maxNewTokens: number };
  /**
   * Takes each token the job gets, with its log-probability under the model's raw logits; false once it
   * needs no more (a stop, its limit, a client gone).
   */
  onToken(token: number, logprob: number): boolean;
  /** The job's tokens have ended (after onToken said false, at the model's stop, or at its limit), or failed. */
  onEnd(error?: Error): void;
}

export interface DecodeBatcherOptions {
  /** Sequences decoded together in one batch at most. */
  maxBatchSize: number;
  /** Batches decoding at once at most (their steps take turns); more requests wait for the next batch. */
  maxConcurrentBatches: number;
  /** The model takes an attention mask: prompts of different lengths share a batch (left-padded). */
  paddedBatches: boolean;
}

/** What a batcher is doing, and has done. */
export interface DecodeStats {
  running: number;
  waiting: number;
  batches: number;
  largestBatch: number;
}

export class DecodeBatcher {
  private waiting: DecodeJob[] = [];
  private running = 0;
  private scheduled = false;
  private batches = 0;
  private largestBatch = 0;

  constructor(
    private readonly model: Model,
    private readonly options: DecodeBatcherOptions,
  ) {}

  /** Batches decoding now, jobs waiting for one, batches started so far and the most sequences one held. */
  get stats(): DecodeStats {
    return {
      running: this.running,
      waiting: this.waiting.length,
      batches: this.batches,
      largestBatch: this.largestBatch,
    };
  }

  submit(job: DecodeJob): void {
    this.waiting.push(job);
    this.schedule();
  }

  /** Takes a job out of the queue if it has not started: true if it was still waiting. */
  withdraw(job: DecodeJob): boolean {
    const before = this.waiting.length;
    this.waiting = this.waiting.filter((waiting) => waiting !== job);
    return this.waiting.length < before;
  }

  /** Jobs that come in the same turn of the event loop (one client's n choices, a burst) start together. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.startBatches();
    });
  }

  private startBatches(): void {
    while (this.running < this.options.maxConcurrentBatches && this.waiting.length > 0) {
      const key = this.batchKey(this.waiting[0]);
      const batch = this.waiting.filter((job) => this.batchKey(job) === key).slice(0, this.options.maxBatchSize);
      this.waiting = this.waiting.filter((job) => !batch.includes(job));
      this.running += 1;
      this.batches += 1;
      this.largestBatch = Math.max(this.largestBatch, batch.length);
      void this.decode(batch).finally(() => {
        this.running -= 1;
        this.schedule();
      });
    }
  }

  /** Jobs with equal keys can share a batch: the same sampling (and prompt length, unpadded). */
  private batchKey({ prompt, options }: DecodeJob): string {
    return JSON.stringify([{ ...options, maxNewTokens: 0 }, this.options.paddedBatches ? 0 : prompt.length]);
  }

  /** Decodes `batch` until every job has ended: each step's tokens go to the jobs still taking them. */
  private async decode(batch: DecodeJob[]): Promise<void> {
    const taking = batch.map(() => true);
    const end = (index: number, error?: Error) => {
      if (!taking[index]) return;
      taking[index] = false;
      batch[index].onEnd(error);
    };
    const maxNewTokens = Math.max(...batch.map((job) => job.options.maxNewTokens));
    try {
      const steps = this.model.generateBatchWithLogprobs(
        batch.map((job) => job.prompt),
        { ...batch[0].options, maxNewTokens },
      );
      for await (const { tokens, logprobs = [] } of steps) {
        tokens.forEach((token, index) => {
          if (!taking[index]) return;
          if (token === null || !batch[index].onToken(token, logprobs[index] ?? NaN)) end(index);
        });
        if (!taking.includes(true)) break;
      }
      batch.forEach((_, index) => end(index));
    } catch (error) {
      batch.forEach((_, index) => end(index, error as Error));
    }
  }
}
