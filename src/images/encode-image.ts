// torchvision.io.encode_png / encode_jpeg for JavaScript: a uint8 image
// [C, H, W] encoded in C++ (libpng, libjpeg-turbo) on libuv's pool, for writing
// image folders, thumbnails or test files.
import fs from 'node:fs/promises';

import { firebrandError } from '../errors';
import { native, type NumericArray, type TensorData } from '../native';

function checkSetting(value: number, low: number, high: number, name: string, origin: string): number {
  if (!Number.isInteger(value) || value < low || value > high) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${origin}: ${name} must be an integer in [${low}, ${high}], got ${value}`,
    );
  }
  return value;
}

/** PNG bytes of a uint8 image [C, H, W] with 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA) channels. */
export async function encodePng(
  image: TensorData<NumericArray>,
  options: { compressionLevel?: number } = {},
): Promise<Buffer> {
  const level = checkSetting(options.compressionLevel ?? 6, 0, 9, 'compressionLevel', 'encodePng');
  return native.encodeImage(image, 'png', level);
}

/** JPEG bytes of a uint8 image [C, H, W] with 1 (gray) or 3 (RGB) channels; quality as torchvision's (default 75). */
export async function encodeJpeg(image: TensorData<NumericArray>, options: { quality?: number } = {}): Promise<Buffer> {
  const quality = checkSetting(options.quality ?? 75, 1, 100, 'quality', 'encodeJpeg');
  return native.encodeImage(image, 'jpeg', quality);
}

/** Writes `image` to `path` as PNG, or JPEG when the path ends in .jpg or .jpeg (torchvision's write_png, write_jpeg). */
export async function writeImage(
  path: string,
  image: TensorData<NumericArray>,
  options: { quality?: number } = {},
): Promise<void> {
  const jpeg = /\.jpe?g$/i.test(path);
  await fs.writeFile(path, jpeg ? await encodeJpeg(image, options) : await encodePng(image));
}
