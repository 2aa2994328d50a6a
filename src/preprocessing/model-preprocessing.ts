// The preprocessing a model's training inputs went through, saved beside the
// model (preprocessing.json) by trainer.save, so that the served model
// (Model.load) takes what a service receives: a table's JSON records, missing
// fields included, preprocessed exactly as the training rows were, or encoded
// images, decoded and transformed as the evaluation images were.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import type { Prediction, TensorData, TensorFields } from '../native';
import { readFormatFile } from '../io/json-file';
import { Table, type TableRecord } from '../tables/table';
import { TablePreprocessor, type SavedTablePreprocessor } from './table-preprocessor';
import type { UnknownCategoryListener } from './categorical-columns';
import type { ImagePipeline } from '../images/image-pipeline';

export const PREPROCESSING_FILE = 'preprocessing.json';
const FORMAT = 'firebrand-preprocessing';

interface SavedPreprocessing {
  format: typeof FORMAT;
  formatVersion: 1;
  table?: SavedTablePreprocessor;
  images?: ImagePipeline;
}

export class ModelPreprocessing {
  private constructor(
    private readonly table?: TablePreprocessor,
    private readonly images?: ImagePipeline,
  ) {}

  /** A table's fitted preprocessing (Dataset.fromTable). */
  static ofTable(preprocessor: TablePreprocessor): ModelPreprocessing {
    preprocessor.toJSON(); // refuses an unfitted one, naming fit
    return new ModelPreprocessing(preprocessor);
  }

  /** How images were decoded and transformed (an image dataset's mode, transforms and classes). */
  static ofImages(pipeline: ImagePipeline): ModelPreprocessing {
    return new ModelPreprocessing(undefined, pipeline);
  }

  /** What `folder` saved, or undefined when the model was trained on preprocessed arrays. */
  static read(folder: string): ModelPreprocessing | undefined {
    const file = path.join(folder, PREPROCESSING_FILE);
    if (!fs.existsSync(file)) return undefined;
    const saved = readFormatFile<SavedPreprocessing>(file, FORMAT);
    return new ModelPreprocessing(saved.table && TablePreprocessor.fromJSON(saved.table), saved.images);
  }

  /** Writes preprocessing.json into `folder`. */
  write(folder: string): void {
    fs.writeFileSync(path.join(folder, PREPROCESSING_FILE), `${JSON.stringify(this, null, 1)}\n`);
  }

  toJSON(): SavedPreprocessing {
    return {
      format: FORMAT,
      formatVersion: 1,
      ...(this.table ? { table: this.table.toJSON() } : {}),
      ...(this.images ? { images: this.images } : {}),
    };
  }

  /** Whether both preprocess alike (the same spec and fitted values). */
  sameAs(other: ModelPreprocessing): boolean {
    return JSON.stringify(this) === JSON.stringify(other);
  }

  /** The table preprocessing, when the model was trained on a table. */
  get tablePreprocessor(): TablePreprocessor | undefined {
    return this.table;
  }

  /**
   * A model's output in its target's own units: y * scale + mean where the training targets were
   * standardized (target scale: 'standard'); otherwise as it is.
   */
  unscaled(prediction: Prediction): Prediction {
    const scaling = this.table?.targetScaling;
    if (scaling === undefined || Array.isArray(prediction) || !ArrayBuffer.isView(prediction.data)) return prediction;
    const { data, shape } = prediction as TensorData;
    return { data: Float32Array.from(data as Float32Array, (y) => y * scaling.scale + scaling.mean), shape };
  }

  /** How images were read and transformed, when the model was trained on images. */
  get imagePipeline(): ImagePipeline | undefined {
    return this.images;
  }
}

/** How predict reads records: fields outside the model's columns refused or left out, unknown categories told. */
export interface RecordReading {
  /** 'error' (the default: a typo is caught) or 'ignore' (request ids, the target column, ...: left out). */
  extraFields?: 'error' | 'ignore';
  onUnknownCategory?: UnknownCategoryListener;
}

/** A model's inputs for JSON records, preprocessed as its training rows were. */
export function recordInputs(
  preprocessing: ModelPreprocessing | undefined,
  records: TableRecord[],
  { extraFields = 'error', onUnknownCategory }: RecordReading = {},
): TensorFields {
  const table = preprocessing?.tablePreprocessor;
  if (table === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'predict: got records, but the model was not trained on a table (Dataset.fromTable saves the preprocessing records need)',
    );
  }
  if (extraFields !== 'error' && extraFields !== 'ignore') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `predict options: extraFields must be 'error' or 'ignore', got ${JSON.stringify(extraFields)}`,
    );
  }
  const columns = table.columns;
  const taken =
    extraFields === 'ignore' && Array.isArray(records)
      ? records.map((record) => (typeof record === 'object' && record !== null ? pick(record, columns) : record))
      : records;
  return table.transform(Table.fromRecords(taken, 'records', columns), onUnknownCategory);
}

/** `record`'s fields named in `columns`. */
function pick(record: TableRecord, columns: string[]): TableRecord {
  return Object.fromEntries(columns.filter((name) => name in record).map((name) => [name, record[name]]));
}
