// TrainerConfig: its fields as types, and a partial config resolved against
// config-schema.ts, which owns every rule and default.
import fs from 'node:fs';

import { firebrandError } from '../errors';
import { resolve, validate } from '../options/schema';
import { configSchema } from './config-schema';
import type { MetricName } from './metrics';

/** Every setting of a Trainer; give any subset as options.config (validated as a whole). */
export interface TrainerConfig {
  /** Epochs that fit() runs. Default 3. */
  numEpochs: number;
  /** Stop after this many optimizer steps in all (before numEpochs if it comes first). Default: none. */
  maxSteps?: number;
  /** Stop within a progress report once this many seconds of training are spent, counting resumed runs (adds a Timer; history.stopped). Default: none. */
  maxTime?: number;
  /** Samples per training step. Default 32. */
  batchSize: number;
  /** Samples per evaluation and prediction batch. Default: batchSize. */
  evalBatchSize: number;
  /** Evaluate evalData after every epoch ('epoch'), or every this many optimizer steps as well (history.evaluations). Default 'epoch'. */
  evalEvery: number | 'epoch';
  /**
   * For a module whose forward returns several tensors (an array or an object): the one the loss and
   * metrics read, by key ('logits') or array index ('0'). Default: the first. predict returns them all.
   */
  lossOutput?: string;
  /** Check every floating batch field for NaN/Inf before the model sees it, an error naming the field and step (costs one pass over the data). Default false. */
  checkFiniteInputs: boolean;
  /**
   * Background threads assembling batches (cut, transformed, pinned on CUDA); 0: on the training thread.
   * Default 'auto': one when the data has transforms or trains on CUDA, else 0 (cutting plain rows costs
   * less than handing a batch between threads).
   */
  numWorkers: number | 'auto';
  /** Batches each worker prepares ahead of training. Default 2. */
  prefetchFactor: number;
  /**
   * Reshuffle the training data every epoch: randperm seeded seed + epoch, a pure function of both, as
   * DistributedSampler (checked against it, ranks included). Default true.
   */
  shuffle: boolean;
  /** Drop the last, short batch of an epoch. Default false. */
  dropLast: boolean;
  /** Seeds weight initialisation, dropout and shuffling: the same seed gives the same run on CPU. Default 42. */
  seed: number;
  /** 'auto' (CUDA, else MPS, else CPU), 'cpu', 'cuda', 'cuda:<index>' or 'mps'; one that is not there is an error, never a silent fallback. Default 'auto'. */
  device: string;
  /**
   * libtorch's intra-op threads, process-wide (torch.set_num_threads). 'auto': one thread or every CPU,
   * whichever steps faster while training, measured again from time to time (docs/performance.md,
   * Threads on a busy machine); a number fixes them, and results are then bit-identical from run to run
   * whatever else runs. Default 'auto'.
   */
  numThreads: number | 'auto';
  /** Use only deterministic kernels (torch.use_deterministic_algorithms), process-wide. Default false. */
  deterministic: boolean;
  /** Micro-batches per optimizer step. Default 1. See docs/guides/training.md: Gradient accumulation. */
  gradientAccumulationSteps: number;
  /** Clip the global L2 norm of the gradients to this (clip_grad_norm_); the norm before clipping is logged as gradNorm. Default: no clipping. */
  maxGradNorm?: number;
  /** Clamp each gradient element to [-clipValue, clipValue] (clip_grad_value_). Default: no clamping. */
  clipValue?: number;
  /** A NaN/Inf loss or gradient norm: 'error' rejects fit naming the step, before the weights change; 'skip' drops that optimizer step and counts it (skippedSteps). Default 'error'. */
  nonFiniteLoss: 'error' | 'skip';
  /**
   * Autocast the forward and the loss, also in evaluate and predict: 'bf16' (CPU or CUDA), 'fp16' (CUDA
   * only, with loss scaling), 'no'.
   * Default 'no'. A precision the device cannot run is an error, never a silent fp32 run.
   */
  mixedPrecision: 'no' | 'fp16' | 'bf16';
  /** Loss scaling (torch.cuda.amp.GradScaler); on by default with fp16 only. */
  gradScaler: GradScalerConfig;
  /** An exponential moving average of the weights (timm's ModelEmaV3, Lightning's EMAWeightAveraging); off by default. */
  ema: EmaConfig;
  /** Data-parallel settings, used when launched as several ranks (`firebrand launch`, torchrun). */
  distributed: DistributedConfig;
  /** Metrics computed in C++ over each epoch and evaluation, by name (accuracy is always there for class-index losses). */
  metrics: MetricName[];
  /** Optimizer steps between log reports (onLog, plain progress lines). Default 50. */
  logEvery: number;
  /** During fit, SIGINT/SIGTERM stop training at the next step (an interrupted checkpoint with outputDir) and fit resolves with the history so far; a second one exits at once (code 130/143). Default true. */
  handleSignals: boolean;
  /**
   * Show progress on stdout: on a TTY a bar fitted to the terminal (moving-average loss, ETA, steps/s,
   * learning rates), plain lines otherwise; a `stopped:` line says why training ended early. Default true.
   */
  progressBar: boolean;
  /** Built-in loggers writing under outputDir/logs: 'csv', 'jsonl', 'tensorboard'. Default none. */
  loggers: ('csv' | 'jsonl' | 'tensorboard')[];
  /** Where checkpoints go: outputDir/checkpoints/step-<globalStep>/ at every epoch's end. Default: none saved. */
  outputDir?: string;
  /** With outputDir: also checkpoint every this many optimizer steps, mid-epoch too. Default: epoch ends only. */
  saveEvery?: number;
  /** With outputDir: keep at most this many checkpoints, the latest and the best counted among them and never deleted (a limit of 1 keeps both when they differ). Default: all. */
  saveTotalLimit?: number;
  /** true: continue from outputDir's latest checkpoint (start fresh if there is none); a path: from that checkpoint. Default false. */
  resumeFromCheckpoint?: boolean | string;
  /** How a resumed fit may differ from the run it continues. */
  resume: ResumeConfig;
  /** The epoch-log field whose best value marks history.best and the best checkpoint. Default 'valLoss' with evalData, else 'loss'. */
  metricForBestModel?: string;
  /** Default: false when metricForBestModel names a loss or error, true otherwise. */
  greaterIsBetter?: boolean;
  /** After fit, load the weights of the best checkpoint (needs outputDir and metricForBestModel). Default false. */
  loadBestModelAtEnd: boolean;
  /** Weights loaded (strictly) before the first fit that does not resume: .safetensors or TorchScript. */
  initWeightsFrom?: string;
  /**
   * Fine-tuning: module paths or parameter names whose parameters do not train ('backbone', 'layer*',
   * '**.bn1'; * within a name part, ** across parts). Autograd computes no gradient for them, the
   * optimizer leaves them out, and modules left with nothing to train run in eval mode (BatchNorm
   * statistics and dropout too). trainer.unfreeze() brings them back. Default: none.
   */
  freeze?: string | string[];
  /**
   * Modules (paths or patterns, as freeze) whose activations are not kept for backward but recomputed
   * there (torch.utils.checkpoint): less memory, one more forward of them per step; the same losses and
   * weights. Models written as TypeScript modules. Default: none.
   */
  activationCheckpointing?: string | string[];
}

/**
 * Data-parallel settings, used when the process runs as one rank of several (WORLD_SIZE > 1, as set by
 * `firebrand launch` or torchrun). The run's shape (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) comes
 * from the environment.
 */
export interface DistributedConfig {
  /** c10d backend: 'auto' (NCCL for CUDA training when built with it, else Gloo), 'gloo' or 'nccl'. Default 'auto'. */
  backend?: 'auto' | 'gloo' | 'nccl';
  /** Seconds the rendezvous and each collective may take before the run fails (a rank died or hangs). Default 1800. */
  timeout?: number;
  /** Gradients are all-reduced in buckets of about this many MiB, as PyTorch DDP's bucket_cap_mb. Default 25. */
  bucketCapMb?: number;
  /** Rank 0's buffers (BatchNorm statistics) replace the others' before each step, as DDP's broadcast_buffers. Default true. */
  broadcastBuffers?: boolean;
  /**
   * ZeRO stage 1, as torch.distributed.optim.ZeroRedundancyOptimizer: each rank holds and steps the optimizer
   * state of a share of the parameters (largest first, to the rank with the fewest elements), then sends their
   * new values to the others. Optimizer memory per rank falls as 1/worldSize; the weights are DDP's.
   * Checkpoints hold the whole state (gathered on rank 0), so they resume with or without it. Default false.
   */
  zeroRedundancyOptimizer?: boolean;
  /**
   * Every batch norm layer becomes an nn.syncBatchNorm before the model is built (torch.nn.SyncBatchNorm's
   * convert_sync_batchnorm, Lightning's sync_batchnorm): while training on several ranks it normalizes by the
   * statistics of all ranks' batches together. Default false.
   */
  syncBatchNorm?: boolean;
}

/** torch.cuda.amp.GradScaler's settings, for fp16 training. */
export interface GradScalerConfig {
  /** Loss scaling: steps whose scaled gradients overflow are skipped and counted (skippedSteps); the scale is logged as gradScale. Default: mixedPrecision === 'fp16'. */
  enabled?: boolean;
  /** The first scale. Default 65536. */
  initScale?: number;
  /** The scale grows by this after growthInterval clean steps. Default 2. */
  growthFactor?: number;
  /** And shrinks by this at a step that overflows. Default 0.5. */
  backoffFactor?: number;
  /** Clean steps before the scale grows. Default 2000. */
  growthInterval?: number;
}

/**
 * config.ema: after each optimizer step every weight's average moves toward it (average = lerp(average,
 * weight, 1 - decay); the first step copies). Evaluation runs on the averages, checkpoints keep them
 * (ema.safetensors), and at the end of fit the model takes them.
 */
export interface EmaConfig {
  /** Keep the average, updated in C++ after each optimizer step (timm's ModelEmaV3, Lightning's EMAWeightAveraging). Default false. */
  enabled?: boolean;
  /** average = lerp(average, weight, 1 - decay); the first step copies. Default 0.999. */
  decay?: number;
  /** timm's warm-up: the decay grows as 1 - (1 + step)^(-2/3) up to `decay`. Default false. */
  warmup?: boolean;
  /** Evaluate (and pick the best checkpoint) on the averaged weights. Default true. */
  evaluate?: boolean;
}

/** config.resume: what a resumed fit may change of the run it continues. */
export interface ResumeConfig {
  /**
   * 'same' (default): the world size must be the checkpoint's, and the run continues exactly. 'reshard': another
   * world size continues it: weights, optimizer state, step and history carry over, and the epoch goes on at
   * the first global batch the checkpoint's ranks had not all trained, its samples drawn from the same
   * permutation and sharded over the new ranks (up to one global batch trained twice; not bit-exact).
   */
  worldSize?: 'same' | 'reshard';
}

/** The defaults every config field takes when not given (config-schema.ts owns them). */
export function defaultConfig(): ResolvedConfig {
  return resolveConfig({});
}

/** A config with every field resolved, nested ones too. */
export type ResolvedConfig = TrainerConfig & {
  gradScaler: Required<GradScalerConfig>;
  ema: Required<EmaConfig>;
  resume: Required<ResumeConfig>;
  distributed: Required<DistributedConfig>;
};

/** Checks a partial config (every problem at once) and fills in the defaults, nested fields too. */
export function resolveConfig(partial: Partial<TrainerConfig> = {}, origin = 'config'): ResolvedConfig {
  validate(partial, configSchema, origin);
  return resolve(partial as Record<string, unknown>, configSchema) as unknown as ResolvedConfig;
}

/** A partial TrainerConfig from a JSON file, checked as a whole (errors name the file and each field). */
export function loadConfig(path: string): Partial<TrainerConfig> {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${path}: cannot read the config (${(error as Error).message})`);
  }
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (error) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${path}: not valid JSON (${(error as Error).message})`);
  }
  validate(values, configSchema, path);
  return values as Partial<TrainerConfig>;
}
