// What Dataset.split goes by (stratify, groups): a field's values, the values
// themselves, or for images a function of each file, one value per sample.
import { firebrandError } from '../errors';
import type { TensorFields } from '../native';
import type { SplitKey } from './dataset-options';

/** The dataset a key is read from. */
export interface KeyedSamples {
  length: number;
  fields(): TensorFields;
  /** Each image file and its label, when the samples are image files. */
  images?: () => { path: string; label: number }[];
}

/** One value per sample, by which `option` ('stratify' or 'groups') splits. */
export function splitKeyValues(by: SplitKey, option: string, samples: KeyedSamples): (number | string)[] {
  if (typeof by === 'function') {
    if (samples.images === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `split: ${option} as a function takes each image file; this dataset holds no image files (give a field or the values)`,
      );
    }
    return samples.images().map((sample) => by(sample));
  }
  const fields = typeof by === 'string' ? samples.fields() : {};
  const values = typeof by === 'string' ? fields[by]?.data : by;
  if (values === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `split: ${option} '${by}' is not a field of this dataset (it has ${Object.keys(fields).join(', ')})`,
    );
  }
  if (values.length !== samples.length) {
    throw firebrandError(
      'ERR_FIREBRAND_SHAPE_MISMATCH',
      `split: ${option} gives ${values.length} values for ${samples.length} samples; give one per sample`,
    );
  }
  return Array.from(values as ArrayLike<number | string | bigint>, (value) =>
    typeof value === 'bigint' ? Number(value) : value,
  );
}
