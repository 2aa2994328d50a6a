// A warning when mode 'RGB' (the default, as torchvision's ImageFolder loader) would drop a transparent
// alpha channel: icons and logos keep arbitrary colours (often black) under their transparent pixels, so
// the model sees shapes the eye never did. torchvision drops it without a word; this looks at a few files.
import fs from 'node:fs/promises';

import { native } from '../native';
import type { ImageReadMode } from './image-pipeline';

/** Files looked at: spread over the list, PNG and WebP only (JPEG has no alpha). */
const SAMPLED_FILES = 8;
const MAY_HOLD_ALPHA = /\.(png|webp)$/i;
/** The origins warned already: a service that makes the same dataset again is told once, without a second look. */
const warned = new Set<string>();

/** Warns (FIREBRAND_ALPHA_DROPPED, once per dataset origin) when a sampled PNG or WebP file has pixels that are not opaque. */
export async function warnIfAlphaDropped(
  paths: string[],
  mode: ImageReadMode,
  maxPixels: number,
  origin: string,
): Promise<void> {
  if (mode !== 'RGB' || warned.has(origin)) return;
  const candidates = paths.filter((file) => MAY_HOLD_ALPHA.test(file));
  const stride = Math.max(1, Math.floor(candidates.length / SAMPLED_FILES));
  for (let i = 0; i < candidates.length && i < stride * SAMPLED_FILES; i += stride) {
    const translucent = await translucentPixels(candidates[i], maxPixels);
    if (translucent === 0) continue;
    warned.add(origin);
    process.emitWarning(
      `${origin}: ${candidates[i]} has ${translucent} pixels that are not opaque, and mode 'RGB' drops its ` +
        "alpha channel, keeping whatever colour lies under them; to draw it on a background as a browser does, give mode: 'RGB_ALPHA' " +
        'and imageTransforms.flattenAlpha() first in transforms',
      { code: 'FIREBRAND_ALPHA_DROPPED' },
    );
    return;
  }
}

/** How many pixels of the file have alpha below 255; 0 when it cannot be read (loading will say why). */
async function translucentPixels(file: string, maxPixels: number): Promise<number> {
  try {
    const image = await native.decodeImage(await fs.readFile(file), 'RGB_ALPHA', [], 0, file, maxPixels);
    const plane = image.shape[1] * image.shape[2];
    const alpha = image.data.subarray(3 * plane, 4 * plane);
    let count = 0;
    for (let i = 0; i < alpha.length; i++) count += alpha[i] < 255 ? 1 : 0;
    return count;
  } catch {
    return 0;
  }
}
