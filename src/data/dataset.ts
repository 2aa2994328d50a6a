// Datasets live in C++ as tensors; this class is their handle in TypeScript.
import { firebrandError } from '../errors';
import {
  native,
  NativeDataset,
  NumericArray,
  OptionFields,
  TensorFields,
  TokenFileOptions,
  TokenWindowOptions,
} from '../native';
import { BatchLoader, LoaderOptions } from './batch-loader';
import { ModelPreprocessing } from '../preprocessing/model-preprocessing';
import { TablePreprocessor } from '../preprocessing/table-preprocessor';
import { readCsv } from '../tables/read-csv';
import type { Table } from '../tables/table';
import {
  imageCsvDataset,
  imageFilesDataset,
  imageFolderDataset,
  type ImageCsvOptions,
  type ImageDatasetOptions,
  type ImageDatasetParts,
  type ImageFile,
  type ImageFolderOptions,
} from '../images/image-datasets';
import { resolveImageTransforms, type ImageTransformSpec } from '../images/image-transforms';
import { csvOptionsSchema, idxOptionsSchema, transformSchemas } from './data-schemas';
import { batchOrderSchema, loaderSchema, resolveLoaderOptions } from './loader-options';
import { resolveOptions } from '../options/schema';
import { splitFractions } from '../tables/split-fractions';
import { splitIndicesBy } from '../tables/split-indices';
import type { TransformSpec } from './transforms';
import type {
  ArrayDatasetSource,
  ArrayDtype,
  BatchOrderOptions,
  CsvOptions,
  DatasetSplitOptions,
  IdxOptions,
  SampleWeightOptions,
} from './dataset-options';
import { SAMPLE_WEIGHT_OPTION_KEYS } from './dataset-options';
import { refuseUnknownKeys } from '../options/option-keys';
import { splitKeyValues } from './split-keys';
import type { HuggingFaceTokenizer } from '../text/huggingface-tokenizer';
import { sftDatasetFields, type SftOptions, type SftRow } from '../text/sft-rows';

/** The parts of Dataset.split, by position ([train, validation]) and by name. */
export type DatasetSplit = [Dataset, Dataset] & { train: Dataset; validation: Dataset };

export class Dataset {
  /** @internal */
  readonly native: NativeDataset;
  /**
   * How raw rows became these samples (Dataset.fromTable, fromCsv): a trainer that fits on them saves it
   * with the model, so that the served model takes raw records.
   */
  readonly preprocessing?: ModelPreprocessing;

  private constructor(handle: NativeDataset, preprocessing?: ModelPreprocessing) {
    this.native = handle;
    this.preprocessing = preprocessing;
  }

  /**
   * Reads an IDX pair (MNIST-family images and labels, plain or .gz) in C++,
   * on a worker thread.
   */
  static async fromIdx(inputsPath: string, targetsPath: string, options: IdxOptions = {}): Promise<Dataset> {
    const resolved = resolveOptions(options, idxOptionsSchema, 'Dataset.fromIdx options') as IdxOptions;
    const handle = await native.NativeDataset.fromIdx(inputsPath, targetsPath, resolved as OptionFields);
    return new Dataset(handle, idxPreprocessing(resolved, handle.fieldShapes.input));
  }

  /** Inputs and targets from two NumPy .npy files (any shape, samples first), read in C++. */
  static async fromNpy(inputsPath: string, targetsPath: string): Promise<Dataset> {
    return new Dataset(await native.NativeDataset.fromNpy(inputsPath, targetsPath));
  }

  /**
   * Arrays of a NumPy .npz archive (numpy.savez or savez_compressed), read in C++. `fields` maps
   * dataset fields to array names ({ input: 'x_train', target: 'y_train' }); default: every array,
   * as a field of its name.
   */
  static async fromNpz(path: string, fields?: Record<string, string>): Promise<Dataset> {
    return new Dataset(await native.NativeDataset.fromNpz(path, fields));
  }

  /**
   * Tensors of a .safetensors file as fields, read and checked in C++ (a malformed file is an error,
   * never an out-of-bounds read). `fields` as for fromNpz.
   */
  static async fromSafetensors(path: string, fields?: Record<string, string>): Promise<Dataset> {
    return new Dataset(await native.NativeDataset.fromSafetensors(path, fields));
  }

  /**
   * A CSV file of numeric columns (readCsv: a header, quoting, CRLF, a BOM): the label column as `target`
   * (default the last; class labels are class indices, whole numbers), the others, or `columns`, as float32
   * `input`. A text column or a missing value is an error naming the column and line: encode and impute
   * those with a TablePreprocessor fitted on the training rows, and Dataset.fromTable.
   */
  static async fromCsv(path: string, options: CsvOptions = {}): Promise<Dataset> {
    const resolved = resolveOptions(options, csvOptionsSchema, 'Dataset.fromCsv options') as CsvOptions;
    const table = await readCsv(path, { delimiter: resolved.delimiter, header: resolved.header });
    const label = labelColumnOf(table, resolved.labelColumn);
    const columns = resolved.columns ?? table.columns.filter((name) => name !== label);
    for (const name of columns) {
      const cells = table.column(name);
      const row =
        cells instanceof Float64Array ? -1 : cells.findIndex((cell) => cell !== null && Number.isNaN(Number(cell)));
      if (row >= 0) {
        throw firebrandError(
          'ERR_FIREBRAND_DATA',
          `${table.where(row)}: column '${name}' holds ${JSON.stringify(cells[row])}, not a number; fromCsv reads numeric columns: ` +
            'choose them (columns), or encode this one with a TablePreprocessor and Dataset.fromTable',
        );
      }
    }
    const preprocessor = new TablePreprocessor({
      numeric: { columns, scale: 'none' },
      target: { column: label, kind: resolved.targets === 'value' ? 'value' : 'index' },
    });
    return Dataset.fromTable(table, preprocessor.fit(table));
  }

  /**
   * torchvision's ImageFolder: a class per subfolder of `root` (sorted names: `dataset.classes`), its
   * .jpg/.jpeg/.png/.webp files found recursively, as ImageFolder orders them. The images are decoded (JPEG,
   * PNG 8/16-bit gray/RGB/RGBA/palette, WebP; EXIF orientation applied) and put through `transforms`
   * (imageTransforms: torchvision.transforms.v2's) in C++, on the loader's worker threads, as batches are cut;
   * `target` holds the class indices. An empty class folder is an error naming it.
   */
  static async fromImageFolder(root: string, options: ImageFolderOptions = {}): Promise<Dataset> {
    return Dataset.ofImages(await imageFolderDataset(root, options));
  }

  /** Image files with labels (class indices, or class names indexed in sorted order), read as fromImageFolder. */
  static fromImageFiles(files: ImageFile[], options: ImageDatasetOptions = {}): Dataset {
    return Dataset.ofImages(imageFilesDataset(files, options));
  }

  /**
   * A CSV of image paths (relative to the CSV's folder, or `root`) and labels (pathColumn 'path', labelColumn
   * 'label' by default), read as fromImageFolder.
   */
  static async fromImageCsv(path: string, options: ImageCsvOptions = {}): Promise<Dataset> {
    return Dataset.ofImages(await imageCsvDataset(path, options));
  }

  private static ofImages(parts: ImageDatasetParts): Dataset {
    return new Dataset(parts.handle, ModelPreprocessing.ofImages(parts.pipeline));
  }

  /**
   * A table's rows through a TablePreprocessor fitted on the training rows (never on these, unless these
   * are them): fields `input` (float32), `categories` (int64, for index-encoded columns) and `target`.
   * The preprocessing goes with the dataset, and with a model trained on it.
   */
  static fromTable(table: Table, preprocessor: TablePreprocessor): Dataset {
    const fields = preprocessor.transformWithTarget(table);
    return new Dataset(native.NativeDataset.fromFields(fields), ModelPreprocessing.ofTable(preprocessor));
  }

  /**
   * A dataset from TypedArrays: fields `input` and `target`. The data is copied once into libtorch
   * tensors, since JS may change, transfer or collect its arrays while training runs.
   */
  static fromArrays(source: ArrayDatasetSource): Dataset {
    return Dataset.fromFields({
      input: { data: source.inputs, shape: source.inputShape },
      target: { data: source.targets, shape: source.targetShape ?? [source.targets?.length] },
    });
  }

  /**
   * Next-token training windows over token ids (Int32Array, BigInt64Array, Uint16Array, ..., or a plain
   * array of whole numbers), or over
   * documents (an array of them): `input` is each window of contextLength tokens, `target` the same
   * window one token later. Packed (the default), documents form one stream whose windows are views of
   * it, so a stride of 1 costs no copy per window. A tokenizer gives the ids: `Dataset.fromTokens(new
   * ByteTokenizer().encode(text), { contextLength: 64 })`.
   */
  static fromTokens(
    tokens: NumericArray | number[] | (NumericArray | number[])[],
    options: TokenWindowOptions,
  ): Dataset {
    const single = Array.isArray(tokens) && tokens.every((token) => typeof token === 'number');
    const documents = (single ? [tokens] : [tokens].flat(1)) as (NumericArray | number[])[];
    const typed = documents.map((document, index) =>
      Array.isArray(document) ? tokenIds(document, single ? 'tokens' : `tokens[${index}]`) : document,
    );
    return new Dataset(native.NativeDataset.fromTokens(typed, options));
  }

  /**
   * fromTokens over a token file as nanoGPT's prepare scripts write it (`np.array(ids,
   * dtype=np.uint16).tofile('train.bin')`: raw little-endian ids), read in C++ off the main thread. The
   * ids are held as int64 (8 bytes a token) in one packed stream whose windows are views of it.
   */
  static async fromTokenFile(path: string, options: TokenFileOptions): Promise<Dataset> {
    return new Dataset(await native.NativeDataset.fromTokenFile(path, options));
  }

  /**
   * Supervised fine-tuning data as TRL's SFTTrainer prepares it (text/sft-rows.ts), from JSON Lines, JSON
   * or Parquet files (a Hugging Face dataset's split: datasetSplits) or rows of `{ messages }`, `{ prompt, completion }` or `{ text }`: next-token `target`s where the loss
   * counts (-100 elsewhere) beside `input_ids`; rows with no counted target dropped, with a warning.
   */
  static async fromSft(
    source: string | string[] | SftRow[],
    tokenizer: HuggingFaceTokenizer,
    options: SftOptions = {},
  ): Promise<Dataset> {
    return Dataset.fromFields(await sftDatasetFields(source, tokenizer, options));
  }

  /**
   * A dataset of named fields, each { data, shape } with samples first: `input` feeds the model,
   * `target` the loss, and a TorchScript training_step(batch) gets them all (`mask`, `weight`, ...).
   * Copied once, as fromArrays.
   */
  static fromFields(fields: TensorFields): Dataset {
    return new Dataset(native.NativeDataset.fromFields(fields));
  }

  /**
   * A dataset of zeroed fields whose memory JavaScript fills in place, with no copy: `arrays` are
   * TypedArray views of the C++ tensors (they stay valid even if the Dataset is collected). Fill them
   * before training; writes while an epoch runs race with it.
   */
  static allocate<Fields extends Record<string, { dtype: ArrayDtype; shape: number[] }>>(
    fields: Fields,
  ): { dataset: Dataset; arrays: { [Name in keyof Fields]: NumericArray } } {
    const { dataset, arrays } = native.NativeDataset.allocate(fields);
    return { dataset: new Dataset(dataset), arrays: arrays as { [Name in keyof Fields]: NumericArray } };
  }

  /** Number of samples. */
  get length(): number {
    return this.native.size;
  }

  /** Shape of one sample of each field, by name. */
  get fieldShapes(): Record<string, number[]> {
    return this.native.fieldShapes;
  }

  /** Shape of one input sample. */
  get sampleShape(): number[] | undefined {
    return this.fieldShapes.input;
  }

  /** Shape of one target ([] for a class label). */
  get targetShape(): number[] | undefined {
    return this.fieldShapes.target;
  }

  /** Copies of the fields as stored (before transforms), TypedArrays of their dtype with full shapes. */
  fields(): TensorFields {
    return this.native.fields();
  }

  /**
   * The same samples, cut into batches that go through `transforms` (in C++, in order) whenever
   * they are loaded for training, evaluation or benchmarking. Replaces earlier transforms.
   */
  withTransforms(...transforms: TransformSpec[]): Dataset {
    return new Dataset(
      this.native.withTransforms(
        transforms.map((spec, i) => transformSchemas.resolve(spec, `transforms[${i}]`) as TransformSpec),
      ),
      this.preprocessing,
    );
  }

  /**
   * The same samples, each training epoch drawn as torch's WeightedRandomSampler draws them: `numSamples`
   * (default the dataset's size) indices, each picked with probability proportional to its weight (one per
   * sample; 'balanced': 1 / the count of its target class), with replacement unless `replacement: false`,
   * from a generator seeded seed + epoch. It replaces shuffling; with several ranks the draw is sharded as
   * DistributedSampler shards a permutation. Evaluation still reads every sample once.
   */
  withSampleWeights(weights: ArrayLike<number> | 'balanced', options: SampleWeightOptions = {}): Dataset {
    refuseUnknownKeys(options, SAMPLE_WEIGHT_OPTION_KEYS, 'withSampleWeights options');
    if (options.replacement !== undefined && typeof options.replacement !== 'boolean') {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `withSampleWeights: replacement must be true or false, got ${JSON.stringify(options.replacement)}`,
      );
    }
    const given = weights === 'balanced' ? undefined : Array.from(weights);
    const drawn = this.native.withSampleWeights(given, options.numSamples ?? this.length, options.replacement ?? true);
    return new Dataset(drawn, this.preprocessing);
  }

  /**
   * The same image files through other per-image transforms (an image dataset's; see fromImageFolder):
   * `const [train, validation] = data.split({ validation: 0.1 })`, then each its own transforms.
   */
  withImageTransforms(...transforms: ImageTransformSpec[]): Dataset {
    const pipeline = this.preprocessing?.imagePipeline;
    if (pipeline === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'withImageTransforms: this dataset holds no image files (Dataset.fromImageFolder, fromImageFiles, fromImageCsv); ' +
          'transform tensors with withTransforms',
      );
    }
    const resolved = resolveImageTransforms(transforms, 'withImageTransforms');
    return new Dataset(
      native.withImageTransforms(this.native, resolved as OptionFields[]),
      ModelPreprocessing.ofImages({ ...pipeline, transforms: resolved }),
    );
  }

  /** The class names by index, for a dataset of images labelled by folder or by name. */
  get classes(): string[] | undefined {
    return this.preprocessing?.imagePipeline?.classes;
  }

  /**
   * The same images labelled by index in `classes` (the training data's, say): each sample keeps its class
   * name. A validation folder without some training class then still labels 'dog' as the training data
   * does. A class `classes` lacks is an error naming it and its first file.
   */
  withClasses(classes: string[]): Dataset {
    const pipeline = this.preprocessing?.imagePipeline;
    const own = pipeline?.classes;
    if (pipeline === undefined || own === undefined) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'withClasses: this dataset holds no images labelled by class name (Dataset.fromImageFolder, fromImageFiles, fromImageCsv)',
      );
    }
    const index = new Map(classes.map((name, i) => [name, i]));
    const samples = this.samples;
    const labels = samples.map(({ path: file, label }) => {
      const found = index.get(own[label]);
      if (found === undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_DATA',
          `class '${own[label]}' (${file}, and any other of its files) is none of the classes the model knows ` +
            `(${classes.join(', ')}); leave its files out, or train on them`,
        );
      }
      return found;
    });
    const target = { data: BigInt64Array.from(labels, (label) => BigInt(label)), shape: [labels.length] };
    return new Dataset(this.native.withFields({ target }), ModelPreprocessing.ofImages({ ...pipeline, classes }));
  }

  /** Each sample's image file and class index, in order (torchvision's ImageFolder.samples). */
  get samples(): { path: string; label: number }[] {
    if (this.preprocessing?.imagePipeline === undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'samples: this dataset holds no image files');
    }
    const labels = this.native.fields().target.data;
    return native.imagePaths(this.native).map((file, i) => ({ path: file, label: Number(labels[i]) }));
  }

  /** The image files left out so far because they did not decode (onError: 'skip'), each once, with why. */
  skippedImages(): { path: string; reason: string }[] {
    return native.skippedImages(this.native);
  }

  /**
   * The sample indices of each batch of one epoch, as training sees them: a pure function of
   * (seed, epoch), sharded by rank exactly as torch.utils.data.DistributedSampler does.
   */
  batchOrder(options: BatchOrderOptions = {}): number[][] {
    return this.native.batchOrder(resolveLoaderOptions(options, batchOrderSchema, 'batchOrder options'));
  }

  /**
   * Random [train, validation] parts, the fraction named going to that part: `split({ validation: 0.2 })`
   * or `split({ train: 0.8 })`, also by name: `const { train, validation } = data.split(...)`. The same samples
   * in the same order as torch.utils.data.random_split(dataset, [train, validation]) with a generator seeded
   * `seed` (default 42). With `stratify` (a field of one value per sample, such as 'target', or the values
   * themselves) each label's samples are split alone, so both parts hold it in the split's proportion; with
   * `groups` a group's samples stay together. Those parts keep the dataset's order. The parts are copies.
   */
  split(parts: DatasetSplitOptions): DatasetSplit {
    const fractions = splitFractions(parts);
    const seed = parts.seed ?? 42;
    if (parts.stratify !== undefined && parts.groups !== undefined) {
      throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'split: give stratify or groups, not both');
    }
    const by = parts.stratify ?? parts.groups;
    const [train, validation] =
      by === undefined
        ? this.native.split(fractions[0], fractions[1], seed)
        : splitIndicesBy(
            splitKeyValues(by, parts.stratify !== undefined ? 'stratify' : 'groups', {
              length: this.length,
              fields: () => this.native.fields(),
              images: this.preprocessing?.imagePipeline === undefined ? undefined : () => this.samples,
            }),
            parts.stratify !== undefined ? 'stratify' : 'groups',
            fractions,
            seed,
          ).map((indices) => this.native.select(indices));
    const named = [new Dataset(train, this.preprocessing), new Dataset(validation, this.preprocessing)];
    return Object.assign(named, { train: named[0], validation: named[1] }) as DatasetSplit;
  }

  /** One value per sample to split by: a field's (of one value per sample), or the values given. */
  /**
   * One epoch's batches, cut, transformed and prefetched in C++ exactly as training loads them:
   * `for await (const batch of data.batches({ batchSize: 64, epoch: 2 }))`.
   */
  batches(options: LoaderOptions = {}): BatchLoader {
    return new BatchLoader(this.native.loader(resolveLoaderOptions(options, loaderSchema, 'loader options')));
  }

  /** Samples [start, end), sharing memory with this dataset. */
  slice(start: number, end: number = this.length): Dataset {
    return new Dataset(this.native.slice(start, end), this.preprocessing);
  }
}

/**
 * What fromIdx did to the file's uint8 pixels, as image transforms with the same arithmetic (/ 255, then
 * (x - mean) / std), saved with a model so that it is served on raw pixels or on a PNG of the same size.
 */
function idxPreprocessing(options: IdxOptions, sampleShape: number[]): ModelPreprocessing | undefined {
  if (options.scaleBytes === false) return undefined;
  const transforms: ImageTransformSpec[] = [{ name: 'toTensor' }];
  if (options.mean !== undefined || options.std !== undefined) {
    transforms.push({ name: 'normalize', mean: options.mean ?? 0, std: options.std ?? 1 });
  }
  return ModelPreprocessing.ofImages({ mode: 'GRAY', transforms: resolveImageTransforms(transforms), sampleShape });
}

/** The label column's name: given by name or 0-based index, or the last column. */
function labelColumnOf(table: Table, given: string | number | undefined): string {
  if (typeof given === 'string') {
    table.column(given);
    return given;
  }
  const index = given ?? table.columns.length - 1;
  if (index >= table.columns.length) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `Dataset.fromCsv: labelColumn ${index} is past the last of ${table.source()}'s ${table.columns.length} columns`,
    );
  }
  return table.columns[index];
}

/** A plain array of token ids as int32 (int64 past its range); a fractional or unsafe id is named. */
function tokenIds(values: number[], field: string): Int32Array | BigInt64Array {
  const wide = values.some((value) => value >= 2 ** 31 || value < -(2 ** 31));
  const ids = wide ? new BigInt64Array(values.length) : new Int32Array(values.length);
  values.forEach((value, i) => {
    if (!Number.isSafeInteger(value)) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `fromTokens: ${field}[${i}] is ${value}; token ids are whole numbers`,
      );
    }
    ids[i] = (wide ? BigInt(value) : value) as never;
  });
  return ids;
}
