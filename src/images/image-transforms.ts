// Per-image transforms with torchvision.transforms.v2's names, defaults and
// arithmetic, run in C++ on each decoded image [C, H, W] (native/core/images):
// the loader's worker threads apply them as they cut an image dataset's
// batches. Random ones draw from the batch's seeded generator, so a seed (and
// a resumed run) replays the same crops, flips and jitter.
import { firebrandError } from '../errors';
import { native, type OptionFields } from '../native';
import { boolean, field, integer, number, oneOf, REQUIRED, Resolved, Rule, Variants } from '../options/schema';

export type Interpolation = 'nearest' | 'bilinear' | 'bicubic';
export type ImageDtype = 'float32' | 'float64' | 'float16' | 'bfloat16' | 'uint8';
/** A factor, or a [min, max] range it is drawn from (ColorJitter's brightness, contrast, saturation, hue). */
export type JitterRange = number | [number, number];

export interface ImageTransformSpec extends OptionFields {
  name:
    | 'resize'
    | 'centerCrop'
    | 'randomResizedCrop'
    | 'randomHorizontalFlip'
    | 'colorJitter'
    | 'grayscale'
    | 'rgb'
    | 'flattenAlpha'
    | 'toDtype'
    | 'toTensor'
    | 'normalize';
}

/**
 * The transforms that draw random numbers, as their C++ rows say: a model is served with a list without
 * them. Read on first use, as the addon is loaded (importing firebrand never loads it).
 */
export const RANDOM_IMAGE_TRANSFORMS: readonly string[] = new Proxy([] as string[], {
  get(names, key) {
    if (names.length === 0) names.push(...native.imageTransformRows().flatMap((row) => (row.random ? [row.name] : [])));
    return Reflect.get(names, key);
  },
});

const size: Rule = (value) =>
  integer(1)(value) === undefined ||
  (Array.isArray(value) &&
    (value.length === 1 || value.length === 2) &&
    value.every((item) => integer(1)(item) === undefined))
    ? undefined
    : 'an integer >= 1, or [height, width]';

const range =
  (min: number): Rule =>
  (value) =>
    Array.isArray(value) &&
    value.length === 2 &&
    value.every((item) => typeof item === 'number' && Number.isFinite(item) && item >= min) &&
    value[0] <= value[1]
      ? undefined
      : `[min, max] with ${min} <= min <= max`;

const jitter: Rule = (value) =>
  number(0)(value) === undefined ||
  (Array.isArray(value) && value.length === 2 && value.every((item) => typeof item === 'number'))
    ? undefined
    : 'a number >= 0 or a [min, max] range';

const numbers: Rule = (value) =>
  (typeof value === 'number' && Number.isFinite(value)) ||
  (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'number'))
    ? undefined
    : 'a number or a non-empty list of numbers';

const interpolation = field(oneOf('nearest', 'bilinear', 'bicubic'), 'bilinear', ['bicubic']);

export const imageTransformSchemas = new Variants('image transform', {
  resize: {
    size: field(size, REQUIRED, [1, [2, 3]]),
    interpolation,
    maxSize: field(integer(2), undefined, [2]),
    antialias: field(boolean, true, [false]),
  },
  centerCrop: { size: field(size, REQUIRED, [1, [2, 3]]) },
  randomResizedCrop: {
    size: field(size, REQUIRED, [1, [2, 3]]),
    scale: field(range(0), [0.08, 1], [[0.5, 1]]),
    ratio: field(range(0), [3 / 4, 4 / 3], [[1, 1]]),
    interpolation,
    antialias: field(boolean, true, [false]),
  },
  randomHorizontalFlip: { p: field(number(0, 1), 0.5, [0, 1]) },
  colorJitter: {
    brightness: field(jitter, undefined, [0.4, [0.5, 1.5]]),
    contrast: field(jitter, undefined, [0.4]),
    saturation: field(jitter, undefined, [0.4]),
    hue: field(jitter, undefined, [0.1, [-0.5, 0.5]]),
  },
  grayscale: { numOutputChannels: field((value) => (value === 1 || value === 3 ? undefined : '1 or 3'), 1, [3]) },
  rgb: {},
  flattenAlpha: {
    background: field(
      (value) =>
        Array.isArray(value) &&
        (value.length === 1 || value.length === 3) &&
        value.every((v) => typeof v === 'number' && v >= 0 && v <= 255)
          ? undefined
          : 'a list of 1 or 3 values in [0, 255]',
      [255, 255, 255],
      [[0]],
    ),
  },
  toDtype: {
    dtype: field(oneOf('float32', 'float64', 'float16', 'bfloat16', 'uint8'), 'float32', ['uint8']),
    scale: field(boolean, false, [true]),
  },
  toTensor: {},
  normalize: { mean: field(numbers, REQUIRED, [0.5, [0.5, 0.5, 0.5]]), std: field(numbers, REQUIRED, [0.25]) },
});

/**
 * ColorJitter's factor as v2's _check_input leaves it: a number v is [center - v, center + v] (clipped at 0
 * except for hue), checked against its bound; a range that is only the center means "unchanged".
 */
function jitterRange(value: JitterRange, name: string, origin: string): [number, number] | undefined {
  const hue = name === 'hue';
  const center = hue ? 0 : 1;
  const [low, high] = hue ? [-0.5, 0.5] : [0, Infinity];
  const given: [number, number] = typeof value === 'number' ? [center - value, center + value] : value;
  if (typeof value === 'number' && !hue) given[0] = Math.max(given[0], 0);
  if (!(low <= given[0] && given[0] <= given[1] && given[1] <= high)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${origin}: ${name} ${JSON.stringify(value)} gives [${given}], which must lie in [${low}, ${high}] and increase`,
    );
  }
  return given[0] === center && given[1] === center ? undefined : given;
}

/** A transform spec checked and defaulted (errors under `origin`), as C++ reads it. */
export function resolveImageTransform(spec: ImageTransformSpec, origin: string): ImageTransformSpec {
  const resolved: Resolved = imageTransformSchemas.resolve(spec, origin);
  if (resolved.name === 'resize' && resolved.maxSize !== undefined) {
    const sizes = [resolved.size].flat() as number[];
    if (sizes.length !== 1 || (resolved.maxSize as number) <= sizes[0]) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${origin}: maxSize ${resolved.maxSize} needs one size (the shorter edge's) below it, got size ${JSON.stringify(resolved.size)}`,
      );
    }
  }
  if (resolved.name === 'colorJitter') {
    for (const name of ['brightness', 'contrast', 'saturation', 'hue']) {
      if (resolved[name] === undefined) continue;
      const given = jitterRange(resolved[name] as JitterRange, name, `${origin} (colorJitter)`);
      if (given === undefined) delete resolved[name];
      else resolved[name] = given;
    }
  }
  return resolved as ImageTransformSpec;
}

/** The list checked and defaulted, each transform named by its place. */
export function resolveImageTransforms(specs: ImageTransformSpec[], origin = 'transforms'): ImageTransformSpec[] {
  if (!Array.isArray(specs)) {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', `${origin}: expected a list of image transforms`);
  }
  return specs.map((spec, i) => resolveImageTransform(spec, `${origin}[${i}]`));
}

/** torchvision.transforms.v2 by its names: `imageTransforms.randomResizedCrop(224)`. */
export const imageTransforms = {
  /** v2.Resize: one size matches the shorter edge (at most maxSize for the longer), two are [height, width]. */
  resize(
    size: number | [number, number],
    options: { interpolation?: Interpolation; maxSize?: number; antialias?: boolean } = {},
  ): ImageTransformSpec {
    return { name: 'resize', size, ...options };
  },
  /** v2.CenterCrop: the central [height, width] (zero-padded where the image is smaller). */
  centerCrop(size: number | [number, number]): ImageTransformSpec {
    return { name: 'centerCrop', size };
  },
  /** v2.RandomResizedCrop: a random area (scale) and aspect (ratio) of the image, resized to `size`. */
  randomResizedCrop(
    size: number | [number, number],
    options: {
      scale?: [number, number];
      ratio?: [number, number];
      interpolation?: Interpolation;
      antialias?: boolean;
    } = {},
  ): ImageTransformSpec {
    return { name: 'randomResizedCrop', size, ...options };
  },
  /** v2.RandomHorizontalFlip: mirrors the image left-right with probability p. */
  randomHorizontalFlip(p = 0.5): ImageTransformSpec {
    return { name: 'randomHorizontalFlip', p };
  },
  /** v2.ColorJitter: brightness, contrast, saturation and hue, each drawn from its range, in a random order. */
  colorJitter(
    options: { brightness?: JitterRange; contrast?: JitterRange; saturation?: JitterRange; hue?: JitterRange } = {},
  ): ImageTransformSpec {
    return { name: 'colorJitter', ...options };
  },
  /** v2.Grayscale: ITU-R 601 luma, in 1 or 3 (repeated) channels. */
  grayscale(numOutputChannels: 1 | 3 = 1): ImageTransformSpec {
    return { name: 'grayscale', numOutputChannels };
  },
  /** v2.RGB: a 1-channel image repeated to 3 channels (3 or more stay as they are). */
  rgb(): ImageTransformSpec {
    return { name: 'rgb' };
  },
  /**
   * Composites an image with alpha (GRAY_ALPHA, RGB_ALPHA) onto a plain `background` (0-255 per channel, default
   * white) and drops the alpha, as a browser draws it on a canvas: read with mode 'RGB_ALPHA', then this. Mode
   * 'RGB' instead drops alpha keeping the colours hidden under transparent pixels (torchvision's decode_image),
   * which a canvas never shows. An image without alpha passes unchanged.
   */
  flattenAlpha(background: number[] = [255, 255, 255]): ImageTransformSpec {
    return { name: 'flattenAlpha', background };
  },
  /** v2.ToDtype: with scale, uint8's [0, 255] maps to [0, 1] (and back). */
  toDtype(dtype: ImageDtype = 'float32', options: { scale?: boolean } = {}): ImageTransformSpec {
    return { name: 'toDtype', dtype, ...options };
  },
  /**
   * torchvision.transforms.ToTensor's scaling (v1): uint8 to float32 x / 255, as Dataset.fromIdx scales (v2's
   * toDtype multiplies by 1/255, which can differ in the last bit).
   */
  toTensor(): ImageTransformSpec {
    return { name: 'toTensor' };
  },
  /** v2.Normalize: (x - mean) / std per channel, on a floating-point image. */
  normalize(mean: number | number[], std: number | number[]): ImageTransformSpec {
    return { name: 'normalize', mean, std };
  },
};
