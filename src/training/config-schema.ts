// Every TrainerConfig field: what it accepts and its default (the one owner of
// both; TypeScript types and docs are in config.ts). --help and the config reference's
// table (docs/reference/config.md) are made from these entries.

import { batchingFields } from '../data/loader-options';
import {
  atLeastOne,
  boolean,
  either,
  field,
  fraction,
  integer,
  listOf,
  number,
  oneOf,
  positive,
  Resolved,
  Schema,
  text,
} from '../options/schema';

const gradScalerSchema: Schema = {
  enabled: field(
    boolean,
    (_: Resolved, root: Resolved) => root.mixedPrecision === 'fp16',
    [true, false],
    "true with mixedPrecision 'fp16'",
  ),
  initScale: field(positive, 65536, [1e-30, 2 ** 24]),
  growthFactor: field(atLeastOne, 2, [1, 10]),
  backoffFactor: field(fraction, 0.5, [1e-30, 1]),
  growthInterval: field(integer(1), 2000, [1]),
};

const emaSchema: Schema = {
  enabled: field(boolean, false, [true, false]),
  decay: field(number(0, 1), 0.999, [0, 1]),
  warmup: field(boolean, false, [true]),
  evaluate: field(boolean, true, [false]),
};

const resumeSchema: Schema = {
  worldSize: field(oneOf('same', 'reshard'), 'same', ['reshard']),
};

const distributedSchema: Schema = {
  backend: field(oneOf('auto', 'gloo', 'nccl'), 'auto', ['gloo']),
  timeout: field(positive, 1800, [5]),
  bucketCapMb: field(positive, 25, [1e-6]),
  broadcastBuffers: field(boolean, true, [false]),
  zeroRedundancyOptimizer: field(boolean, false, [true]),
  syncBatchNorm: field(boolean, false, [true]),
};

export const configSchema: Schema = {
  numEpochs: field(integer(1), 3, [1]),
  maxSteps: field(integer(1), undefined, [1]),
  maxTime: field(positive, undefined, [1e-3]),
  ...batchingFields,
  evalBatchSize: field(integer(1), (config: Resolved) => config.batchSize, [1], 'batchSize'),
  evalEvery: field(either(integer(1), oneOf('epoch')), 'epoch', [1, 'epoch']),
  checkFiniteInputs: field(boolean, false, [true]),
  lossOutput: field(text, undefined, [], "forward's first output"),
  device: field(text, 'auto', ['cpu']),
  numThreads: field(either(integer(1), oneOf('auto')), 'auto', [1, 'auto']),
  deterministic: field(boolean, false, [true]),
  gradientAccumulationSteps: field(integer(1), 1, [1, 3]),
  maxGradNorm: field(positive, undefined, [1e-12, 1e12]),
  clipValue: field(positive, undefined, [1e-12, 1e12]),
  nonFiniteLoss: field(oneOf('error', 'skip'), 'error', ['skip']),
  metrics: field(listOf(), [], [['accuracy', 'f1Macro']]),
  mixedPrecision: field(oneOf('no', 'fp16', 'bf16'), 'no', ['bf16']),
  gradScaler: gradScalerSchema,
  ema: emaSchema,
  distributed: distributedSchema,
  logEvery: field(integer(1), 50, [1]),
  progressBar: field(boolean, true, [false]),
  handleSignals: field(boolean, true, [false]),
  loggers: field(listOf('csv', 'jsonl', 'tensorboard'), [], [['csv']]),
  outputDir: field(text, undefined),
  saveEvery: field(integer(1), undefined, [1]),
  saveTotalLimit: field(integer(1), undefined, [1]),
  resumeFromCheckpoint: field(either(boolean, text), undefined, [false], 'false'),
  resume: resumeSchema,
  metricForBestModel: field(text, undefined, ['loss'], "'valLoss' with evalData, else 'loss'"),
  greaterIsBetter: field(boolean, undefined, [true], 'false for a loss or error, else true'),
  loadBestModelAtEnd: field(boolean, false, [false]),
  initWeightsFrom: field(text, undefined),
  freeze: field(either(text, listOf()), undefined, ['0', ['0.*', '2.bias']], 'none'),
  activationCheckpointing: field(either(text, listOf()), undefined, [], 'none'),
};
