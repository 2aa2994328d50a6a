// How a model's training images were read and transformed for evaluation, saved
// with the model so that the served model takes encoded image bytes (a JPEG,
// PNG or WebP upload), or raw uint8 pixels, and decodes and transforms them as
// its evaluation data was.
import { firebrandError } from '../errors';
import { native, type NumericArray, type TensorData } from '../native';
import { RANDOM_IMAGE_TRANSFORMS, type ImageTransformSpec } from '../images/image-transforms';

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
export async function imageBatch(pipeline: ImagePipeline, images: Uint8Array[]): Promise<TensorData<NumericArray>> {
  const transforms = servedTransforms(pipeline);
  if (images.length === 0) throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'predict: no images given');
  const decoded = await Promise.all(
    images.map((bytes, i) => native.decodeImage(bytes, pipeline.mode, transforms, 0, `images[${i}]`)),
  );
  const shape = decoded[0].shape;
  decoded.forEach((image, i) => {
    if (image.shape.join() !== shape.join()) {
      throw firebrandError(
        'ERR_FIREBRAND_SHAPE_MISMATCH',
        `predict: images[${i}] is [${image.shape}] after the transforms but images[0] is [${shape}]; ` +
          'the saved transforms must end at one size (resize and centerCrop)',
      );
    }
  });
  const Kind = decoded[0].data.constructor as { new (length: number): NumericArray };
  const data = new Kind(decoded.length * decoded[0].data.length);
  decoded.forEach((image, i) => (data as Float32Array).set(image.data as Float32Array, i * image.data.length));
  return asSamples(pipeline, { data, shape: [decoded.length, ...shape] }, 'the decoded images');
}
