// Image datasets: files and labels from a class-per-subfolder tree
// (torchvision's ImageFolder), from a list, or from a CSV of paths and labels.
// The files are decoded and transformed in C++ on the loader's worker threads
// as each batch is cut; the dataset carries how (its ImagePipeline), so a
// model trained on it is served on encoded image bytes.
import path from 'node:path';

import { firebrandError } from '../errors';
import { native, type NativeDataset, type OptionFields } from '../native';
import { boolean, field, integer, oneOf, resolve, text, validate, type Schema } from '../options/schema';
import { MAX_IMAGE_PIXELS, type ImagePipeline, type ImageReadMode } from './image-pipeline';
import { readCsv } from '../tables/read-csv';
import { warnIfAlphaDropped } from './dropped-alpha';
import { scanImageFolder } from './image-folder';
import { resolveImageTransforms, type ImageTransformSpec } from './image-transforms';

export interface ImageDatasetOptions {
  /** Per-image transforms (imageTransforms.*), in order, run in C++ as batches are cut. Default none. */
  transforms?: ImageTransformSpec[];
  /** The channels decoded: 'RGB' (default, as ImageFolder's loader), 'GRAY', 'GRAY_ALPHA', 'RGB_ALPHA', 'UNCHANGED'. */
  mode?: ImageReadMode;
  /**
   * A file that does not decode (corrupt, truncated, not an image): 'stop' (default) fails the epoch naming it;
   * 'skip' leaves it out of its batch and lists it in dataset.skippedImages().
   */
  onError?: 'stop' | 'skip';
  /** A file saying more pixels is broken (as onError says), refused before they are allocated. Default MAX_IMAGE_PIXELS (PIL's); 0: any. */
  maxPixels?: number;
}

export interface ImageFolderOptions extends ImageDatasetOptions {
  /** Lets a class folder hold no image (torchvision's allow_empty). Default false: an error naming it. */
  allowEmpty?: boolean;
}

export interface ImageFile {
  path: string;
  /** A class index, or a class name (names are indexed in sorted order, as ImageFolder's folders). */
  label: number | string;
}

export interface ImageCsvOptions extends ImageDatasetOptions {
  /** The column of file paths, relative to `root`. Default 'path'. */
  pathColumn?: string;
  /** The column of labels: class indices, or class names. Default 'label'. */
  labelColumn?: string;
  /** What relative paths are relative to. Default: the CSV file's folder. */
  root?: string;
  delimiter?: string;
}

const imageOptionsSchema: Schema = {
  transforms: field((value) => (Array.isArray(value) ? undefined : 'a list of image transforms'), []),
  mode: field(oneOf('UNCHANGED', 'GRAY', 'GRAY_ALPHA', 'RGB', 'RGB_ALPHA'), 'RGB'),
  onError: field(oneOf('stop', 'skip'), 'stop'),
  maxPixels: field(integer(0), MAX_IMAGE_PIXELS),
  allowEmpty: field(boolean, false),
  pathColumn: field(text, 'path'),
  labelColumn: field(text, 'label'),
  root: field(text),
  delimiter: field(text, ','),
};

/** A native image dataset and how its images are read, for the Dataset that wraps it. */
export interface ImageDatasetParts {
  handle: NativeDataset;
  pipeline: ImagePipeline;
}

function checked<Options extends object>(
  options: Options,
  origin: string,
  allowed: string[],
): Required<ImageFolderOptions & ImageCsvOptions> {
  const schema = Object.fromEntries(Object.entries(imageOptionsSchema).filter(([name]) => allowed.includes(name)));
  validate(options, schema, origin);
  return resolve(options as Record<string, unknown>, schema) as Required<ImageFolderOptions & ImageCsvOptions>;
}

const IMAGE_OPTIONS = ['transforms', 'mode', 'onError', 'maxPixels'];

function imageDataset(
  paths: string[],
  labels: number[],
  classes: string[] | undefined,
  options: Required<ImageDatasetOptions>,
  origin: string,
): ImageDatasetParts {
  const transforms = resolveImageTransforms(options.transforms, `${origin}: transforms`);
  const target = { data: BigInt64Array.from(labels, (label) => BigInt(label)), shape: [labels.length] };
  const handle = native.imageDataset(
    paths,
    { target },
    {
      mode: options.mode,
      onError: options.onError,
      transforms: transforms as OptionFields[],
      maxPixels: options.maxPixels,
    },
  );
  return { handle, pipeline: { mode: options.mode, transforms, ...(classes ? { classes } : {}) } };
}

/** Labels as class indices: whole numbers stay, names are indexed in sorted order (the classes). */
function classIndices(labels: (number | string)[], origin: string): { indices: number[]; classes?: string[] } {
  if (labels.every((label) => typeof label === 'number')) {
    labels.forEach((label, i) => {
      if (!Number.isInteger(label) || (label as number) < 0) {
        throw firebrandError(
          'ERR_FIREBRAND_DATA',
          `${origin}: label of sample ${i} is ${label}; class indices are whole numbers >= 0`,
        );
      }
    });
    return { indices: labels as number[] };
  }
  const names = labels.map(String);
  const classes = [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const index = new Map(classes.map((name, i) => [name, i]));
  return { indices: names.map((name) => index.get(name) as number), classes };
}

/** torchvision's ImageFolder: `root`/<class>/**.{jpg,jpeg,png,webp}. */
export async function imageFolderDataset(root: string, options: ImageFolderOptions): Promise<ImageDatasetParts> {
  const origin = `Dataset.fromImageFolder(${root})`;
  const resolved = checked(options, `${origin} options`, [...IMAGE_OPTIONS, 'allowEmpty']);
  const samples = await scanImageFolder(root, resolved.allowEmpty);
  await warnIfAlphaDropped(samples.paths, resolved.mode, resolved.maxPixels, origin);
  return imageDataset(samples.paths, samples.targets, samples.classes, resolved, origin);
}

/** Image files with their labels. */
export function imageFilesDataset(files: ImageFile[], options: ImageDatasetOptions): ImageDatasetParts {
  const origin = 'Dataset.fromImageFiles';
  if (!Array.isArray(files) || files.length === 0) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `${origin}: expected a non-empty list of { path, label }`);
  }
  const resolved = checked(options, `${origin} options`, IMAGE_OPTIONS);
  // Synchronous API: the look at a few files finishes later; it never rejects.
  void warnIfAlphaDropped(
    files.map((file) => file.path),
    resolved.mode,
    resolved.maxPixels,
    origin,
  );
  const { indices, classes } = classIndices(
    files.map((file) => file.label),
    origin,
  );
  return imageDataset(
    files.map((file) => file.path),
    indices,
    classes,
    resolved,
    origin,
  );
}

/** A CSV with a column of image paths and one of labels. */
export async function imageCsvDataset(csvPath: string, options: ImageCsvOptions): Promise<ImageDatasetParts> {
  const origin = `Dataset.fromImageCsv(${csvPath})`;
  const resolved = checked(options, `${origin} options`, [
    ...IMAGE_OPTIONS,
    'pathColumn',
    'labelColumn',
    'root',
    'delimiter',
  ]);
  const table = await readCsv(csvPath, {
    delimiter: resolved.delimiter,
    columns: [resolved.pathColumn, resolved.labelColumn],
  });
  const root = resolved.root ?? path.dirname(csvPath);
  const cellsOf = (name: string): (string | number | null)[] =>
    Array.from(table.column(name) as ArrayLike<string | number | null>);
  const paths = cellsOf(resolved.pathColumn).map((cell, row) => {
    if (cell === null) {
      throw firebrandError(
        'ERR_FIREBRAND_DATA',
        `${table.where(row)}: column '${resolved.pathColumn}' is empty; each row needs an image path`,
      );
    }
    return path.resolve(root, String(cell));
  });
  const labels = cellsOf(resolved.labelColumn).map((cell, row) => {
    if (cell === null || (typeof cell === 'number' && Number.isNaN(cell))) {
      throw firebrandError(
        'ERR_FIREBRAND_DATA',
        `${table.where(row)}: column '${resolved.labelColumn}' is empty; each row needs a label`,
      );
    }
    return cell;
  });
  const { indices, classes } = classIndices(labels, origin);
  await warnIfAlphaDropped(paths, resolved.mode, resolved.maxPixels, origin);
  return imageDataset(paths, indices, classes, resolved, origin);
}
