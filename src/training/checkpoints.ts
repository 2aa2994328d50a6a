// Checkpoint folders: outputDir/checkpoints/step-<globalStep>/ with the files
// the C++ engine writes (model.safetensors, optimizer*.pt,
// training_state.safetensors) and trainer_state.json, the metadata this layer
// owns. A folder is written under a temporary name, fsynced and renamed; the
// `latest` pointer is replaced last, so a crash at any instant leaves it
// pointing at a complete checkpoint.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { runtimeInfo } from '../runtime';
import { LIBRARY_VERSION } from '../version';
import type { History } from './logs';

export const TRAINER_STATE_FILE = 'trainer_state.json';
const LATEST_FILE = 'latest';
const STEP_FOLDER = /^step-(\d+)$/;

/** What trainer_state.json holds. */
export interface TrainerState {
  libraryVersion: string;
  torchVersion: string;
  config: Record<string, unknown>;
  globalStep: number;
  /** The epoch training continues in, and its first batch not yet trained. */
  epoch: number;
  batchInEpoch: number;
  batchesPerEpoch?: number;
  /** The finished epochs' history, with the best metric so far and its checkpoint. */
  history: History;
  worldSize: number;
  /** Seconds since this run's fit started, summed over resumed runs. */
  wallTimeSeconds: number;
  /** Saved because training was stopped early, not on schedule. */
  interrupted: boolean;
  /** What callbacks stored in onSaveCheckpoint, by their choice of key. */
  callbacks: Record<string, unknown>;
}

/** Where a checkpoint is in its fit: the epoch and the first batch not yet trained, and why it is saved. */
export interface CheckpointPosition {
  epoch: number;
  batchInEpoch: number;
  batchesPerEpoch?: number;
  interrupted: boolean;
}

/** The state a checkpoint saves at `globalStep`: `history` so far after `seconds` of training. */
export function checkpointState(
  config: object,
  globalStep: number,
  position: CheckpointPosition,
  history: History,
  seconds: number,
  worldSize: number,
): TrainerState {
  return {
    libraryVersion: LIBRARY_VERSION,
    torchVersion: runtimeInfo().torchVersion,
    config: { ...config },
    globalStep,
    epoch: position.epoch,
    batchInEpoch: position.batchInEpoch,
    batchesPerEpoch: position.batchesPerEpoch,
    history: { ...history, wallTimeSeconds: seconds },
    worldSize,
    wallTimeSeconds: seconds,
    interrupted: position.interrupted,
    callbacks: {},
  };
}

/** An error unless `outputDir` is a directory or does not exist yet (fit creates it). */
export function checkOutputDir(outputDir: string): void {
  const existing = fs.statSync(outputDir, { throwIfNoEntry: false });
  if (existing !== undefined && !existing.isDirectory()) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `config.outputDir: ${outputDir} is a file, expected a directory (or a path to create one at)`,
    );
  }
}

export function checkpointsFolder(outputDir: string): string {
  return path.join(outputDir, 'checkpoints');
}

function fsyncPath(target: string): void {
  const descriptor = fs.openSync(target, 'r');
  try {
    fs.fsyncSync(descriptor);
  } finally {
    fs.closeSync(descriptor);
  }
}

function writeDurably(file: string, text: string): void {
  const temporary = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(temporary, text);
  fsyncPath(temporary);
  fs.renameSync(temporary, file);
  fsyncPath(path.dirname(file));
}

/**
 * Writes checkpoint `step-<globalStep>` into outputDir: `writeEngineFiles` fills a temporary folder,
 * trainer_state.json is added, the folder is renamed into place and `latest` updated. Returns its path.
 */
export async function writeCheckpoint(
  outputDir: string,
  state: TrainerState,
  writeEngineFiles: (folder: string) => Promise<void>,
): Promise<string> {
  const parent = checkpointsFolder(outputDir);
  fs.mkdirSync(parent, { recursive: true });
  const name = `step-${state.globalStep}`;
  const temporary = path.join(parent, `.${name}.tmp-${process.pid}`);
  fs.rmSync(temporary, { recursive: true, force: true });
  fs.mkdirSync(temporary);
  await writeEngineFiles(temporary);
  writeDurably(path.join(temporary, TRAINER_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  fsyncPath(temporary);
  const final = path.join(parent, name);
  // A checkpoint of the same step (an interrupted run saved it before) is replaced whole.
  if (fs.existsSync(final)) fs.rmSync(final, { recursive: true, force: true });
  fs.renameSync(temporary, final);
  fsyncPath(parent);
  writeDurably(path.join(parent, LATEST_FILE), `${name}\n`);
  return final;
}

/** The checkpoint `latest` points at, or undefined when outputDir has none. */
export function latestCheckpoint(outputDir: string): string | undefined {
  const pointer = path.join(checkpointsFolder(outputDir), LATEST_FILE);
  if (!fs.existsSync(pointer)) return undefined;
  return path.join(checkpointsFolder(outputDir), fs.readFileSync(pointer, 'utf8').trim());
}

export function readTrainerState(folder: string): TrainerState {
  const file = path.join(folder, TRAINER_STATE_FILE);
  if (!fs.existsSync(file)) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${folder}: not a firebrand checkpoint (no ${TRAINER_STATE_FILE})`);
  }
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as TrainerState;
  } catch (error) {
    throw firebrandError('ERR_FIREBRAND_FILE', `${file}: not valid JSON (${(error as Error).message})`);
  }
}

/**
 * Deletes the oldest checkpoints beyond `limit`, never `keep` (the latest and the best), and the
 * temporary folders and `latest` files of saves that did not finish.
 */
export function pruneCheckpoints(outputDir: string, limit: number | undefined, keep: (string | undefined)[]): void {
  const parent = checkpointsFolder(outputDir);
  if (!fs.existsSync(parent)) return;
  const entries = fs.readdirSync(parent);
  for (const entry of entries) {
    // A killed save's temporary folder or `latest` file; this process's own could still be in use.
    const leftOver = entry.startsWith('.step-') || entry.startsWith(`${LATEST_FILE}.tmp-`);
    if (leftOver && !entry.endsWith(`.tmp-${process.pid}`)) {
      fs.rmSync(path.join(parent, entry), { recursive: true, force: true });
    }
  }
  if (limit === undefined) return;
  const kept = new Set(
    keep.filter((folder): folder is string => folder !== undefined).map((folder) => path.resolve(folder)),
  );
  const steps = entries
    .map((entry) => ({ entry, match: STEP_FOLDER.exec(entry) }))
    .filter((item) => item.match !== null)
    .sort((a, b) => Number(b.match?.[1]) - Number(a.match?.[1]));
  // The latest and the best count against the limit first, wherever they are in step order.
  let left = limit - steps.filter(({ entry }) => kept.has(path.resolve(parent, entry))).length;
  for (const { entry } of steps) {
    const folder = path.resolve(parent, entry);
    if (kept.has(folder)) continue;
    if (left > 0) {
      left--;
      continue;
    }
    fs.rmSync(folder, { recursive: true, force: true });
  }
}
