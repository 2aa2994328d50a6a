// A model saved for inference: a folder with model.safetensors (the weights),
// firebrand_model.json (how to rebuild the model) and, for TorchScript
// modules, model.pt. Written under a temporary name and renamed, like checkpoints.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { replaceFolder } from '../io/folder-writes';
import { readFormatFile } from '../io/json-file';
import type { ModelSpec } from '../nn/model-spec';
import type { GenerationDefaults } from './generation-defaults';
import { runtimeInfo } from '../runtime';
import { LIBRARY_VERSION } from '../version';

export const WEIGHTS_FILE = 'model.safetensors';
/** A checkpoint's averaged weights (config.ema), by state-dict name. */
export const EMA_WEIGHTS_FILE = 'ema.safetensors';
export const TORCHSCRIPT_FILE = 'model.pt';
const DESCRIPTION_FILE = 'firebrand_model.json';
const FORMAT = 'firebrand-model';

/** The model's description without weights: script parameters keep their names and shapes only. */
type SavedSpec =
  | Exclude<ModelSpec, { type: 'script' }>
  | { type: 'script'; source: string; parameters: { name: string; shape: number[] }[] };

interface SavedModelDescription {
  format: typeof FORMAT;
  formatVersion: 1;
  libraryVersion: string;
  torchVersion: string;
  model: SavedSpec;
  /**
   * The trainer's evalBatchSize, which Model.predict batches by unless told otherwise: kernels may sum in
   * another order for another batch size, and the loaded model then predicts what trainer.predict did, bit
   * for bit. Absent in folders saved before it: 256.
   */
  predictBatchSize?: number;
  /** generate's defaults (a Hugging Face checkpoint's generation config), which Model.load keeps. */
  generation?: GenerationDefaults;
}

/** A saved model's description: the spec to build it, how predict batches and generate samples by default. */
export interface SavedModel {
  spec: ModelSpec;
  predictBatchSize: number;
  generation?: GenerationDefaults;
}

/** Writes `folder` whole: `writeFiles` fills a temporary folder (weights, TorchScript), then the description is added. */
export async function writeSavedModel(
  folder: string,
  { spec, predictBatchSize, generation }: SavedModel,
  writeFiles: (temporary: string) => Promise<void>,
): Promise<void> {
  const saved: SavedSpec =
    spec.type === 'script'
      ? { type: 'script', source: spec.source, parameters: spec.parameters.map(({ name, shape }) => ({ name, shape })) }
      : spec.type === 'torchscript'
        ? { type: 'torchscript', path: TORCHSCRIPT_FILE }
        : spec;
  const description: SavedModelDescription = {
    format: FORMAT,
    formatVersion: 1,
    libraryVersion: LIBRARY_VERSION,
    torchVersion: runtimeInfo().torchVersion,
    model: saved,
    predictBatchSize,
    ...(generation ? { generation } : {}),
  };
  await replaceFolder(folder, async (temporary) => {
    await writeFiles(temporary);
    fs.writeFileSync(path.join(temporary, DESCRIPTION_FILE), `${JSON.stringify(description, null, 2)}\n`);
  });
}

/** What a saved folder describes: the model spec, ready to build, and predict's batch size. */
export function readSavedModel(folder: string): SavedModel {
  const file = path.join(folder, DESCRIPTION_FILE);
  if (!fs.existsSync(file)) {
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `${folder}: not a saved firebrand model (no ${DESCRIPTION_FILE}); trainer.save(folder) writes one`,
    );
  }
  const description = readFormatFile<SavedModelDescription>(file, FORMAT);
  return {
    spec: savedSpec(folder, description.model),
    predictBatchSize: description.predictBatchSize ?? 256,
    generation: description.generation,
  };
}

/** The spec of a saved model (script parameters zeroed until the weights load). */
function savedSpec(folder: string, model: SavedSpec): ModelSpec {
  if (model.type === 'torchscript') return { type: 'torchscript', path: path.join(folder, TORCHSCRIPT_FILE) };
  if (model.type === 'script') {
    return {
      type: 'script',
      source: model.source,
      parameters: model.parameters.map(({ name, shape }) => ({
        name,
        shape,
        data: new Float32Array(shape.reduce((count, size) => count * size, 1)),
      })),
    };
  }
  return model;
}
