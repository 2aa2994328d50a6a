// What Dataset's readers, split and batch order take: their options and sources.
import type { NumericArray, TensorFields } from '../native';
import { optionKeys } from '../options/option-keys';
import type { SplitFractions } from '../tables/split-fractions';

export interface IdxOptions {
  /**
   * uint8 inputs become float32 in [0, 1], like torchvision's ToTensor. Default true: the scaling and the
   * normalization below are saved with a model trained on the dataset, which then takes raw pixels.
   */
  scaleBytes?: boolean;
  /** Normalisation applied after scaling: (x - mean) / std. */
  mean?: number;
  std?: number;
  /** Shape of one sample, e.g. [1, 28, 28] to add the channel axis a conv2d needs. */
  sampleShape?: number[];
}

export interface CsvOptions {
  /** The target column: its header name, or its 0-based index. Default: the last column. */
  labelColumn?: string | number;
  delimiter?: ',' | ';' | '\t' | '|' | ' ';
  /** Whether the first line names the columns. Default true. */
  header?: boolean;
  /** 'class': integer labels (int64); 'value': float32 regression targets. Default 'class'. */
  targets?: 'class' | 'value';
  /** The feature columns, by name, in this order. Default: every column but the label's. */
  columns?: string[];
}

/** What a split goes by: a field of one value per sample, the values, or (images) a function of each file. */
export type SplitKey =
  string | ArrayLike<number | string | bigint> | ((sample: { path: string; label: number }) => number | string);

export type DatasetSplitOptions = SplitFractions & {
  /** Splits each label alone: a field of one value per sample ('target'), or the labels themselves. */
  stratify?: SplitKey;
  /**
   * Keeps each group's samples in one part: a field of one value per sample, the group of each sample, or
   * for images a function of each file: `groups: ({ path }) => path.split('_')[0]` keeps an object's photos
   * together, so that none of them lands in validation next to its twin in training.
   */
  groups?: SplitKey;
};

export interface BatchOrderOptions {
  batchSize?: number;
  shuffle?: boolean;
  dropLast?: boolean;
  seed?: number;
  epoch?: number;
  rank?: number;
  worldSize?: number;
}

/** Element types that have a TypedArray (Float32Array, ..., BigInt64Array for int64). */
export type ArrayDtype = 'float32' | 'float64' | 'int32' | 'int64' | 'int16' | 'int8' | 'uint8';

/** @deprecated The same type as TensorFields, by its earlier name. */
export type DatasetFields = TensorFields;

export interface ArrayDatasetSource {
  inputs: NumericArray;
  /** Full shape of the inputs, samples first: [N, ...]. */
  inputShape: number[];
  /** Integer labels for classification losses, numbers for regression. */
  targets: NumericArray;
  /** Full shape of the targets, samples first. Default [targets.length]. */
  targetShape?: number[];
}

/** Dataset.withSampleWeights' options (torch.utils.data.WeightedRandomSampler's num_samples, replacement). */
export interface SampleWeightOptions {
  /** Samples each training epoch draws. Default the dataset's size. */
  numSamples?: number;
  /** Whether a sample may be drawn more than once in an epoch. Default true. */
  replacement?: boolean;
}

export const SAMPLE_WEIGHT_OPTION_KEYS = optionKeys<SampleWeightOptions>()(['numSamples', 'replacement']);
