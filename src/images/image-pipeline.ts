// How a model's training images were read and transformed for evaluation, saved
// with the model so that the served model takes encoded image bytes (a JPEG,
// PNG or WebP upload), or raw uint8 pixels, and decodes and transforms them as
// its evaluation data was.
import { firebrandError } from '../errors';
import { native, type NumericArray, type TensorData } from '../native';
import { RANDOM_IMAGE_TRANSFORMS, type ImageTransformSpec } from '../images/image-transforms';

/**
 * The most pixels an image file may say it holds (PIL's Image.MAX_IMAGE_PIXELS) before decoding, and
 * datasets, refuse it: a 420 KB PNG can say 12000x12000, 432 MB of pixels. `maxPixels: 0` lifts the limit.
 */
export const MAX_IMAGE_PIXELS = 89478485;

/** torchvision.io.ImageReadMode: the channels an image is decoded to, whatever its file holds. */
export type ImageReadMode = 'UNCHANGED' | 'GRAY' | 'GRAY_ALPHA' | 'RGB' | 'RGB_ALPHA';

export interface ImagePipeline {
  mode: ImageReadMode;
  /** Resolved per-image transforms, in order. */
  transforms: ImageTransformSpec[];
  /** Class names by index (an image folder's subfolders), when the labels were named. */
  classes?: string[];
  /** The model's input per sample, when the transformed image is reshaped to it (Dataset.fromIdx's sampleShape). */
  sampleShape?: number[];
}

/** The random transforms of `pipeline`, by name. */
export function randomTransformsOf(pipeline: ImagePipeline): string[] {
  return pipeline.transforms.map((spec) => spec.name).filter((name) => RANDOM_IMAGE_TRANSFORMS.includes(name));
}

/** The saved transforms, refused when they are random (a model is served with its evaluation transforms). */
function servedTransforms(pipeline: ImagePipeline): ImagePipeline['transforms'] {
  const random = randomTransformsOf(pipeline);
  if (random.length > 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_STATE',
      `predict: the model's saved image transforms include random ones (${random.join(', ')}): it was fitted ` +
        'without evalData of images to take evaluation transforms from; fit with evalData: an image dataset ' +
        'whose transforms are the evaluation ones (resize, centerCrop, toDtype, normalize)',
    );
  }
  return pipeline.transforms;
}

/** `batch` [N, ...image] reshaped to the model's sample shape, when the pipeline names one. */
function asSamples(pipeline: ImagePipeline, batch: TensorData<NumericArray>, what: string): TensorData<NumericArray> {
  if (pipeline.sampleShape === undefined) return batch;
  const [count, ...image] = batch.shape;
  const size = (shape: number[]) => shape.reduce((product, extent) => product * extent, 1);
  if (size(image) !== size(pipeline.sampleShape)) {
    throw firebrandError(
      'ERR_FIREBRAND_SHAPE_MISMATCH',
      `predict: ${what} [${image}] after the transforms hold ${size(image)} values, but the model's samples are [${pipeline.sampleShape}]`,
    );
  }
  return { data: batch.data, shape: [count, ...pipeline.sampleShape] };
}

/** Raw pixels (uint8, [N, C, H, W], [N, H, W] or [N, n]) through the saved evaluation transforms. */
export async function pixelBatch(
  pipeline: ImagePipeline,
  pixels: TensorData<NumericArray>,
): Promise<TensorData<NumericArray>> {
  const transformed = await native.transformImages(pixels, servedTransforms(pipeline));
  return asSamples(pipeline, transformed, 'the images');
}

/** Encoded images as one batch { data, shape } of the model's input, through the saved evaluation pipeline. */
export async function imageBatch(
  pipeline: ImagePipeline,
  images: Uint8Array[],
  maxPixels = MAX_IMAGE_PIXELS,
): Promise<TensorData<NumericArray>> {
  const batch = await native.decodeImages(images, pipeline.mode, servedTransforms(pipeline), 0, 'images', maxPixels);
  return asSamples(pipeline, batch, 'the decoded images');
}

/**
 * The values the served transforms can make of uint8 pixels, per the conversions and normalizations among
 * them; undefined when a float resize (bicubic may overshoot) comes after a conversion.
 */
function transformedRange(pipeline: ImagePipeline): [number, number] | undefined {
  let [low, high] = [0, 255];
  let float = false;
  for (const spec of pipeline.transforms) {
    if (spec.name === 'toTensor' || (spec.name === 'toDtype' && spec.scale === true && spec.dtype !== 'uint8')) {
      [low, high, float] = [low / 255, high / 255, true];
    } else if (spec.name === 'toDtype') {
      float = spec.dtype !== 'uint8';
    } else if (spec.name === 'normalize') {
      const means = [spec.mean].flat() as number[];
      const stds = [spec.std].flat() as number[];
      // One value stands for every channel, as normalize broadcasts it.
      const channels = Math.max(means.length, stds.length);
      const ends = Array.from({ length: channels }, (_, i) => [
        means[means.length === 1 ? 0 : i],
        stds[stds.length === 1 ? 0 : i],
      ]).flatMap(([mean, std]) => [low, high].map((end) => (end - mean) / std));
      [low, high] = [Math.min(...ends), Math.max(...ends)];
    } else if (spec.name === 'resize' && float) {
      return undefined;
    }
  }
  return [low, high];
}

/**
 * Floats given to a model trained on images are taken as transformed already: their sample shape must be the
 * one the evaluation transforms end at, and their values within what those transforms make (0-255 floats
 * to a normalized model are raw pixels, which would give logits of hundreds without a word).
 */
export function checkTransformedImages(pipeline: ImagePipeline, inputs: NumericArray, shape: number[]): void {
  const expected = pipeline.sampleShape;
  if (expected !== undefined && shape.slice(1).join() !== expected.join()) {
    throw firebrandError(
      'ERR_FIREBRAND_SHAPE_MISMATCH',
      `predict: the model takes images [${expected}] (its evaluation transforms end at that size), got samples ` +
        `[${shape.slice(1)}]; give encoded images, or uint8 pixels with their shape, for predict to transform`,
    );
  }
  const range = transformedRange(pipeline);
  if (range === undefined || !(inputs instanceof Float32Array || inputs instanceof Float64Array)) return;
  let [low, high] = [Infinity, -Infinity];
  for (const value of inputs) [low, high] = [Math.min(low, value), Math.max(high, value)];
  const slack = 1e-4 * (range[1] - range[0]);
  if (low < range[0] - slack || high > range[1] + slack) {
    const raw = low >= 0 && high > 1.5 && high <= 255 ? '; they look like raw pixels' : '';
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `predict: the inputs hold values in [${low.toPrecision(4)}, ${high.toPrecision(4)}], but the model's saved image ` +
        `transforms make values in [${range[0].toPrecision(4)}, ${range[1].toPrecision(4)}]${raw}: give pixels as a ` +
        'Uint8Array with their shape (or encoded images) for predict to transform them',
    );
  }
}
