// torchvision.io.decode_image for JavaScript: encoded JPEG, PNG or WebP bytes
// decoded in C++ on libuv's pool, EXIF orientation applied, then put through
// image transforms; what a model trained on images is served with.
import fs from 'node:fs/promises';

import { firebrandError } from '../errors';
import type { NumericArray, OptionFields, TensorData } from '../native';
import { native } from '../native';
import type { ImageReadMode } from '../preprocessing/image-preprocessing';
import { resolveImageTransforms, type ImageTransformSpec } from './image-transforms';

export interface DecodeImageOptions {
  /** The channels decoded. Default 'RGB'. */
  mode?: ImageReadMode;
  /** Transforms applied after decoding (imageTransforms.*). Default none. */
  transforms?: ImageTransformSpec[];
  /** Seeds the random transforms' generator (as torch.manual_seed before them). Default 0. */
  seed?: number;
  /** Names the bytes in errors. Default 'image'. */
  source?: string;
}

const MODES: ImageReadMode[] = ['UNCHANGED', 'GRAY', 'GRAY_ALPHA', 'RGB', 'RGB_ALPHA'];

/** The image [C, H, W]: uint8 as decoded (16-bit PNGs scaled to 8 bits), or as the transforms leave it. */
export async function decodeImage(
  bytes: Uint8Array,
  options: DecodeImageOptions = {},
): Promise<TensorData<NumericArray>> {
  const mode = options.mode ?? 'RGB';
  if (!MODES.includes(mode)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `decodeImage: mode ${JSON.stringify(mode)}; expected ${MODES.join(', ')}`,
    );
  }
  const transforms = resolveImageTransforms(options.transforms ?? [], 'decodeImage: transforms');
  return native.decodeImage(bytes, mode, transforms as OptionFields[], options.seed ?? 0, options.source ?? 'image');
}

/** The image file at `path`, decoded as decodeImage. */
export async function readImage(
  path: string,
  options: Omit<DecodeImageOptions, 'source'> = {},
): Promise<TensorData<NumericArray>> {
  return decodeImage(await fs.readFile(path), { ...options, source: path });
}
