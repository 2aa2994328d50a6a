// What fit and evaluate take: the data, and their options.
import type { Dataset } from '../data/dataset';
import type { StreamingDataset } from '../data/streaming-dataset';
import { optionKeys } from '../options/option-keys';

/** Training or evaluation data: a dataset held in C++, or batches streamed from JavaScript. */
export type TrainingData = Dataset | StreamingDataset;

export interface FitOptions {
  /** Evaluated after every epoch (and every evalEvery steps); its loss and metrics appear as valLoss, valAccuracy... */
  evalData?: TrainingData;
  /** Overrides config.numEpochs for this call. */
  numEpochs?: number;
  /** Aborting it stops training at the next step boundary (as shouldStop); fit resolves with the history so far. */
  signal?: AbortSignal;
  /**
   * After an abort (signal, SIGINT/SIGTERM), how long a callback's pending promise may still hold fit;
   * past it fit stops waiting and rejects with ERR_FIREBRAND_CALLBACK_ABANDONED. Default 5000.
   */
  abortGraceMs?: number;
}

export const FIT_OPTION_KEYS = optionKeys<FitOptions>()(['evalData', 'numEpochs', 'signal', 'abortGraceMs']);

export interface EvaluateOptions {
  /** Samples per forward. Default config.evalBatchSize. */
  batchSize?: number;
  /**
   * In a distributed run, evaluate is a collective (default true): each rank evaluates its shard and the
   * loss and metrics are summed over all, so every rank must call it. false evaluates all the data on
   * this rank alone (the `if rank == 0: evaluate()` pattern), with no collective.
   */
  distributed?: boolean;
}

export const EVALUATE_OPTION_KEYS = optionKeys<EvaluateOptions>()(['batchSize', 'distributed']);
