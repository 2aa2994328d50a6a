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
  if (state.worldSize !== worldSize) differences.push(`world size ${state.worldSize} (this run: ${worldSize})`);
  if (state.batchesPerEpoch !== batchesPerEpoch) {
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
  return { folder, state };
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
