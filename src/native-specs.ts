// What TypeScript sends the engine and the loader once it has resolved and
// checked a config: the engine spec, a fit's options, an epoch's segment, and
// the plan C++ answers with. Fields are read by name in
// native/binding/config_convert.cpp.
/** A loss, optimizer or schedule resolved by objective-schemas.ts: its name and every field. */
export type NativeNamedSpec = Record<string, unknown> & { name: string };

export interface NativeEngineSpec {
  model: object;
  loss?: NativeNamedSpec;
  optimizer?: NativeNamedSpec;
  optimizers?: { name: string; optimizer: NativeNamedSpec; params: string[]; loss: string }[];
  lrScheduler?: NativeNamedSpec;
  metrics?: string[];
  mixedPrecision?: string;
  gradScaler: {
    enabled: boolean;
    initScale: number;
    growthFactor: number;
    backoffFactor: number;
    growthInterval: number;
  };
  ema: { enabled: boolean; decay: number; warmup: boolean; evaluate: boolean };
  checkFiniteInputs?: boolean;
  lossOutput?: string;
  freeze?: string[];
  activationCheckpointing?: string[];
  lora?: {
    r: number;
    alpha: number;
    dropout: number;
    targetModules: string[];
    useRslora: boolean;
    useDora: boolean;
    modulesToSave: string[];
  };
  /** Module paths whose linear layers are quantized to int8 once loaded (fromPretrained's quantize). */
  int8Roots?: string[];
  device?: string;
  seed?: number;
}

/** How an epoch is cut into batches (dataset.batches, batchOrder and fits). */
export interface NativeSamplerOptions {
  batchSize: number;
  shuffle: boolean;
  dropLast: boolean;
  seed: number;
  rank?: number;
  worldSize?: number;
}

/** Undefined numWorkers: one worker for transformed or pinned batches, else none. */
export interface NativeLoaderOptions {
  numWorkers?: number;
  prefetchFactor: number;
}

/** One epoch's batches of a dataset, outside a fit (dataset.batches, batchOrder). */
export type NativeLoaderRequest = NativeSamplerOptions & NativeLoaderOptions & { epoch: number; startBatch?: number };

/** A fit's options, resolved by config-schema.ts: sent once, to beginFit. */
export interface NativeFitOptions {
  sampler: NativeSamplerOptions;
  loader: NativeLoaderOptions;
  step: {
    gradientAccumulationSteps: number;
    maxGradNorm?: number;
    clipValue?: number;
    nonFiniteLoss: 'error' | 'skip';
  };
  logEvery: number;
  progressIntervalMs: number;
}

/** One call of trainEpoch: an epoch, or its part up to a pause. */
export interface NativeEpochSegment {
  epoch: number;
  startBatch?: number;
  continueEpoch?: boolean;
  stopAtGlobalStep?: number;
}

/** Undefined fields: streamed data of unknown length. */
export interface FitPlan {
  batchesPerEpoch?: number;
  optimizerStepsPerEpoch?: number;
  totalSteps?: number;
}
