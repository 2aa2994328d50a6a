// Datasets live in C++ as tensors; this class is their handle in TypeScript.
import { native, NativeDataset, NumericArray, TensorData } from '../native';

export interface IdxOptions {
  /** uint8 inputs become float32 in [0, 1], like torchvision's ToTensor. Default true. */
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
}

export interface BatchOrderOptions {
  batchSize?: number;
  shuffle?: boolean;
  dropLast?: boolean;
  seed?: number;
  epoch?: number;
  rank?: number;
  worldSize?: number;
}

export interface ArrayDatasetSource {
  inputs: NumericArray;
  /** Full shape of the inputs, samples first: [N, ...]. */
  inputShape: number[];
  /** Integer labels for classification losses, numbers for regression. */
  targets: NumericArray;
  /** Full shape of the targets, samples first. Default [targets.length]. */
  targetShape?: number[];
}

export class Dataset {
  /** @internal */
  readonly native: NativeDataset;

  private constructor(handle: NativeDataset) {
    this.native = handle;
  }

  /**
   * Reads an IDX pair (MNIST-family images and labels, plain or .gz) in C++,
   * on a worker thread.
   */
  static async fromIdx(inputsPath: string, targetsPath: string, options: IdxOptions = {}): Promise<Dataset> {
    return new Dataset(await native.NativeDataset.fromIdx(inputsPath, targetsPath, { ...options }));
  }

  /** Inputs and targets from two NumPy .npy files (any shape, samples first), read in C++. */
  static async fromNpy(inputsPath: string, targetsPath: string): Promise<Dataset> {
    return new Dataset(await native.NativeDataset.fromNpy(inputsPath, targetsPath));
  }

  /** A numeric CSV file read in C++: one target column, every other column a float32 feature. */
  static async fromCsv(path: string, options: CsvOptions = {}): Promise<Dataset> {
    return new Dataset(await native.NativeDataset.fromCsv(path, { ...options }));
  }

  /** A dataset from TypedArrays. The data is copied once into libtorch tensors. */
  static fromArrays(source: ArrayDatasetSource): Dataset {
    const targetShape = source.targetShape ?? [source.targets?.length];
    return new Dataset(native.NativeDataset.fromArrays(source.inputs, source.inputShape, source.targets, targetShape));
  }

  /** Number of samples. */
  get length(): number {
    return this.native.size;
  }

  /** Shape of one input sample. */
  get sampleShape(): number[] {
    return this.native.sampleShape;
  }

  /** Shape of one target ([] for a class label). */
  get targetShape(): number[] {
    return this.native.targetShape;
  }

  /** A copy of the inputs and targets as TypedArrays of their dtype, with full shapes. */
  toArrays(): { inputs: TensorData<NumericArray>; targets: TensorData<NumericArray> } {
    return this.native.toArrays();
  }

  /**
   * The sample indices of each batch of one epoch, as training sees them: a pure function of
   * (seed, epoch), sharded by rank exactly as torch.utils.data.DistributedSampler does.
   */
  batchOrder(options: BatchOrderOptions = {}): number[][] {
    return this.native.batchOrder({ ...options });
  }

  /**
   * Random [train, validation] parts, `fraction` of the samples going to validation: the same samples
   * in the same order as torch.utils.data.random_split(dataset, [1 - fraction, fraction]) with a
   * generator seeded `seed`. The parts are copies.
   */
  split(fraction: number, seed = 42): [Dataset, Dataset] {
    const [train, validation] = this.native.split(fraction, seed);
    return [new Dataset(train), new Dataset(validation)];
  }

  /** Samples [start, end), sharing memory with this dataset. */
  slice(start: number, end: number = this.length): Dataset {
    return new Dataset(this.native.slice(start, end));
  }
}
