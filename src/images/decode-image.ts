// torchvision.io.decode_image for JavaScript: encoded JPEG, PNG or WebP bytes
// decoded in C++ on libuv's pool, EXIF orientation applied, then put through
// image transforms; what a model trained on images is served with.
import fs from 'node:fs/promises';

import { firebrandError } from '../errors';
import type { NumericArray, OptionFields, TensorData } from '../native';
import { native } from '../native';
import { MAX_IMAGE_PIXELS, type ImageReadMode } from './image-pipeline';
import { resolveImageTransforms, type ImageTransformSpec } from './image-transforms';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';

export interface DecodeImageOptions {
  /** The channels decoded. Default 'RGB'. */
  mode?: ImageReadMode;
  /** Transforms applied after decoding (imageTransforms.*). Default none. */
  transforms?: ImageTransformSpec[];
  /** Seeds the random transforms' generator (as torch.manual_seed before them). Default 0. */
  seed?: number;
  /** Names the bytes in errors. Default 'image'. */
  source?: string;
  /** A file saying more pixels is refused before they are allocated. Default MAX_IMAGE_PIXELS (PIL's); 0: any. */
  maxPixels?: number;
}

const DECODE_IMAGE_OPTION_KEYS = optionKeys<DecodeImageOptions>()([
  'mode',
  'transforms',
  'seed',
  'source',
  'maxPixels',
]);

const MODES: ImageReadMode[] = ['UNCHANGED', 'GRAY', 'GRAY_ALPHA', 'RGB', 'RGB_ALPHA'];

/** The image [C, H, W]: uint8 as decoded (16-bit PNGs scaled to 8 bits), or as the transforms leave it. */
export async function decodeImage(
  bytes: Uint8Array,
  options: DecodeImageOptions = {},
): Promise<TensorData<NumericArray>> {
  refuseUnknownKeys(options, DECODE_IMAGE_OPTION_KEYS, 'decodeImage options');
  const mode = options.mode ?? 'RGB';
  if (!MODES.includes(mode)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `decodeImage: mode ${JSON.stringify(mode)}; expected ${MODES.join(', ')}`,
    );
  }
  const transforms = resolveImageTransforms(options.transforms ?? [], 'decodeImage: transforms');
  const maxPixels = options.maxPixels ?? MAX_IMAGE_PIXELS;
  if (!Number.isInteger(maxPixels) || maxPixels < 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `decodeImage: maxPixels must be a whole number >= 0 (0: any size), got ${String(maxPixels)}`,
    );
  }
  const source = options.source ?? 'image';
  return native.decodeImage(bytes, mode, transforms as OptionFields[], options.seed ?? 0, source, maxPixels);
}

/** The image file at `path`, decoded as decodeImage. */
export async function readImage(
  path: string,
  options: Omit<DecodeImageOptions, 'source'> = {},
): Promise<TensorData<NumericArray>> {
  return decodeImage(await fs.readFile(path), { ...options, source: path });
}
