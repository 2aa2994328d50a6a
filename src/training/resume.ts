// Which checkpoint a fit resumes from (config.resumeFromCheckpoint), checked
// against the run it would continue: what fixes the batch order must match.
import { firebrandError } from '../errors';
import { latestCheckpoint, readTrainerState, TrainerState } from './checkpoints';
import type { TrainerConfig } from './config';

export interface ResumePoint {
  folder: string;
  state: TrainerState;
}

/** The checkpoint to resume from, or undefined to start afresh. */
export function findResumePoint(
  config: TrainerConfig,
  batchesPerEpoch: number | undefined,
  worldSize: number,
): ResumePoint | undefined {
  const resume = config.resumeFromCheckpoint;
  if (resume === undefined || resume === false) return undefined;
  let folder: string | undefined;
  if (resume === true) {
    if (config.outputDir === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'resumeFromCheckpoint: true needs config.outputDir, where checkpoints are',
      );
    }
    folder = latestCheckpoint(config.outputDir);
    // Nothing saved yet: the first run of a job that resumes whenever restarted.
    if (folder === undefined) return undefined;
  } else {
    folder = resume;
  }
  const state = readTrainerState(folder);
  const differences: string[] = [];
  for (const key of ['batchSize', 'gradientAccumulationSteps', 'seed', 'shuffle', 'dropLast'] as const) {
    if (state.config[key] !== config[key]) {
      differences.push(`${key} ${JSON.stringify(state.config[key])} (this run: ${JSON.stringify(config[key])})`);
    }
  }
  const reshard = state.worldSize !== worldSize && config.resume?.worldSize === 'reshard';
  if (state.worldSize !== worldSize && !reshard) {
    differences.push(
      `world size ${state.worldSize} (this run: ${worldSize}; config.resume.worldSize: 'reshard' continues it, not bit-exact)`,
    );
  }
  if (state.batchesPerEpoch !== batchesPerEpoch && !reshard) {
    differences.push(
      `${state.batchesPerEpoch ?? 'unknown'} batches per epoch (this run: ${batchesPerEpoch ?? 'unknown'})`,
    );
  }
  if (differences.length > 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `resumeFromCheckpoint: ${folder} was saved with ${differences.join(', ')}; they must match to continue exactly`,
    );
  }
  return { folder, state: reshard ? resharded(state, batchesPerEpoch, worldSize) : state };
}

/**
 * The checkpoint's position at `worldSize` ranks: its ranks had trained the first batchInEpoch x its world size
 * batches of the epoch's permutation (DistributedSampler's interleaving), so this run starts at the new global
 * batch holding the first of the rest; an epoch it had finished stays finished.
 */
function resharded(state: TrainerState, batchesPerEpoch: number | undefined, worldSize: number): TrainerState {
  const finished = state.batchesPerEpoch !== undefined && state.batchInEpoch >= state.batchesPerEpoch;
  const batchInEpoch =
    finished && batchesPerEpoch !== undefined
      ? batchesPerEpoch
      : Math.floor((state.batchInEpoch * state.worldSize) / worldSize);
  return { ...state, batchInEpoch, batchesPerEpoch, worldSize };
}

/**
 * A 32-bit digest (FNV-1a) of a checkpoint's trainer state, which ranks compare before resuming: rank 0
 * wrote the one file every rank reads, so equal steps of different runs (or copies) differ in it.
 */
export function stateDigest(state: TrainerState): number {
  const text = JSON.stringify(state);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
