// Decoding and per-image transforms against torchvision 0.27 itself: the
// fixtures (scripts/make-image-fixtures.py, sid chroot) hold what
// torchvision.io.decode_image made of each file in each read mode, what v2's
// kernels made of the decoded JPEG with fixed parameters, and what v2's random
// transforms made after torch.manual_seed(seed), which firebrand replays with a
// generator of that seed.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import {
  decodeImage,
  encodeJpeg,
  encodePng,
  loadSafetensors,
  readImage,
  imageTransforms as T,
  runtimeInfo,
  type ImageTransformSpec,
} from '../src';
import type { NumericArray, TensorData } from '../src/native';
import { rejectionOf } from './support/helpers';

const folder = path.join(__dirname, '..', '..', 'test', 'fixtures', 'images');

interface Case {
  kind: 'decode' | 'fixed' | 'random';
  key: string;
  file?: string;
  mode?: 'RGB' | 'GRAY' | 'UNCHANGED' | 'RGB_ALPHA';
  bits?: number;
  input?: 'uint8' | 'float32';
  transforms?: ImageTransformSpec[];
  seed?: number;
}

const golden = JSON.parse(fs.readFileSync(path.join(folder, 'images.golden.json'), 'utf8')) as {
  versions: { torch: string };
  cases: Case[];
};
// libtorch 2.1 and later interpolate uint8 directly, as torchvision does on AVX2 CPUs; 1.13 goes through
// float, which rounds some pixels the other way.
const bytesInterpolated = Number(runtimeInfo().torchVersion.split('.')[0]) >= 2;

function largestDifference(actual: TensorData<NumericArray>, expected: TensorData<NumericArray>, scale = 1): number {
  let largest = 0;
  for (let i = 0; i < expected.data.length; i++) {
    largest = Math.max(largest, Math.abs(Number(actual.data[i]) - Number(expected.data[i]) * scale));
  }
  return largest;
}

describe('image decoding and transforms, against torchvision', function () {
  let tensors: Record<string, TensorData<NumericArray>>;
  let jpeg: Buffer;

  before(async () => {
    tensors = (await loadSafetensors(path.join(folder, 'images.golden.safetensors'))).tensors;
    jpeg = fs.readFileSync(path.join(folder, 'rgb.jpg'));
  });

  it('decodes JPEG, PNG (8 and 16 bits; gray, RGB, RGBA, palette) and WebP as decode_image in each mode, EXIF orientation applied', async () => {
    const cases = golden.cases.filter((entry) => entry.kind === 'decode');
    expect(cases.length).to.be.above(30);
    for (const entry of cases) {
      const image = await readImage(path.join(folder, entry.file as string), { mode: entry.mode });
      const expected = tensors[entry.key];
      const what = `${entry.file} ${entry.mode}`;
      expect(image.shape, what).to.deep.equal(expected.shape);
      expect(image.data, what).to.be.instanceOf(Uint8Array);
      if (entry.bits === 16) {
        // firebrand keeps 8 bits (v * 255 / 65535, rounded): within half a step of torchvision's 16.
        expect(largestDifference(image, expected, 255 / 65535), what).to.be.at.most(0.5 + 1e-9);
      } else {
        expect(largestDifference(image, expected), what).to.equal(0);
      }
    }
  });

  it('the EXIF orientation turns the picture upright: a 36x20 JPEG tagged "rotate 90" decodes as 20 wide, 36 high', async () => {
    const image = await readImage(path.join(folder, 'exif-rotated.jpg'));
    expect(image.shape).to.deep.equal([3, 36, 20]);
  });

  it('deterministic transforms equal v2 (resize bilinear/bicubic/nearest, antialias, maxSize; centerCrop with padding; grayscale; ColorJitter kernels; toDtype; normalize)', async () => {
    const cases = golden.cases.filter((entry) => entry.kind === 'fixed');
    expect(cases.length).to.be.above(20);
    for (const entry of cases) {
      const transforms = entry.transforms as ImageTransformSpec[];
      const before: ImageTransformSpec[] =
        entry.input === 'float32' ? [{ name: 'toDtype', dtype: 'float32', scale: true }] : [];
      const image = await decodeImage(jpeg, { transforms: [...before, ...transforms] });
      const expected = tensors[entry.key];
      const what = JSON.stringify(transforms);
      expect(image.shape, what).to.deep.equal(expected.shape);
      const resizesBytes = transforms[0].name === 'resize' && entry.input === 'uint8';
      const tolerance = image.data instanceof Uint8Array ? (resizesBytes && !bytesInterpolated ? 1 : 0) : 1e-6;
      expect(largestDifference(image, expected), what).to.be.at.most(tolerance);
    }
  });

  it('random transforms replay torchvision after torch.manual_seed: RandomResizedCrop (with its fallback), RandomHorizontalFlip, ColorJitter, and a training pipeline', async () => {
    const cases = golden.cases.filter((entry) => entry.kind === 'random');
    expect(cases.length).to.be.above(15);
    for (const entry of cases) {
      const image = await decodeImage(jpeg, { transforms: entry.transforms, seed: entry.seed });
      const expected = tensors[entry.key];
      const what = `${JSON.stringify(entry.transforms)} seed ${entry.seed}`;
      expect(image.shape, what).to.deep.equal(expected.shape);
      // On 1.13 a resized pixel may be one step off; a jitter after it scales that step by its factors' highest.
      const resizes = entry.transforms?.some((spec) => spec.name === 'randomResizedCrop') ?? false;
      const jitter = entry.transforms?.find((spec) => spec.name === 'colorJitter');
      const gain = jitter
        ? ['brightness', 'contrast', 'saturation'].reduce(
            (product, factor) => product * ((jitter[factor] as number[] | undefined)?.[1] ?? 1),
            1,
          )
        : 1;
      const steps = resizes && !bytesInterpolated ? Math.ceil(gain) : 0;
      const normalized = entry.transforms?.some((spec) => spec.name === 'normalize');
      const tolerance = image.data instanceof Uint8Array ? steps : steps / 255 / (normalized ? 0.224 : 1) + 1e-5;
      expect(largestDifference(image, expected), what).to.be.at.most(tolerance);
    }
  });

  it('a file that does not decode is an error naming it: truncated JPEG and PNG, text named .jpg', async () => {
    for (const [file, reason] of [
      ['truncated.jpg', /corrupt or truncated|Premature end/],
      ['truncated.png', /truncated|ends early/],
      ['not-an-image.jpg', /not a JPEG, PNG or WebP image/],
    ] as const) {
      const error = await rejectionOf(readImage(path.join(folder, file)));
      expect(error.code, file).to.equal('ERR_FIREBRAND_FILE');
      expect(error.message, file).to.contain(file).and.to.match(reason);
    }
  });

  it('encodes PNG (1 to 4 channels) that decodes to the same pixels, and JPEG that decodes close to them', async () => {
    const modes = { 1: 'GRAY', 2: 'GRAY_ALPHA', 3: 'RGB', 4: 'RGB_ALPHA' } as const;
    const rgba = await readImage(path.join(folder, 'rgba.png'), { mode: 'RGB_ALPHA' });
    const [, height, width] = rgba.shape;
    for (const channels of [1, 2, 3, 4] as const) {
      const image = { data: rgba.data.slice(0, channels * height * width), shape: [channels, height, width] };
      const decoded = await decodeImage(await encodePng(image), { mode: modes[channels] });
      expect(decoded, `${channels} channels`).to.deep.equal(image);
    }
    const photo = await readImage(path.join(folder, 'rgb.jpg'));
    const again = await decodeImage(await encodeJpeg(photo, { quality: 95 }));
    expect(again.shape).to.deep.equal(photo.shape);
    let total = 0;
    photo.data.forEach((value, i) => (total += Math.abs(Number(value) - Number(again.data[i]))));
    expect(total / photo.data.length).to.be.below(3);
    const error = await rejectionOf(encodeJpeg(rgba));
    expect(error.code).to.equal('ERR_FIREBRAND_SHAPE_MISMATCH');
    expect(error.message).to.contain(
      'encode JPEG: needs a uint8 image [C, H, W] with C in {1, 3}, got [4, 21, 23] uint8',
    );
  });

  it('options are checked in TypeScript, naming the transform and field', async () => {
    const cases: [ImageTransformSpec[], RegExp][] = [
      [[{ name: 'resize' } as never], /transforms\[0\] \(resize\).*size/],
      [[{ name: 'resize', size: 20, maxSize: 10 }], /maxSize 10 needs one size/],
      [[{ name: 'colorJitter', hue: 0.7 }], /hue 0.7 gives \[-0.7,0.7\]/],
      [
        [{ name: 'randomResizedCop', size: 3 } as never],
        /unknown image transform 'randomResizedCop' \(did you mean 'randomResizedCrop'\?\)/,
      ],
    ];
    for (const [transforms, message] of cases) {
      const error = await rejectionOf(decodeImage(jpeg, { transforms }));
      expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(error.message).to.match(message);
    }
    const error = await rejectionOf(decodeImage(jpeg, { transforms: [{ name: 'normalize', mean: 0.5, std: 0.5 }] }));
    expect(error.message).to.match(
      /transforms\[0\] \(normalize\) on an image \[3, 48, 64\] uint8.*floating-point.*toDtype/,
    );
  });
});

describe('flattenAlpha: transparency composited as a canvas draws it', () => {
  it('composites RGB_ALPHA onto the background and drops alpha; images without alpha pass', async () => {
    const bytes = fs.readFileSync(path.join(folder, 'rgba.png'));
    const rgba = await decodeImage(bytes, { mode: 'RGB_ALPHA' });
    const [, height, width] = rgba.shape;
    const plane = height * width;
    const pixels = rgba.data as Uint8Array;
    expect(
      Array.from(pixels.subarray(3 * plane)).some((alpha) => alpha < 255),
      'the fixture has transparency',
    ).to.equal(true);
    for (const background of [
      [255, 255, 255],
      [0, 64, 128],
    ]) {
      const flat = await decodeImage(bytes, { mode: 'RGB_ALPHA', transforms: [T.flattenAlpha(background)] });
      expect(flat.shape).to.deep.equal([3, height, width]);
      const expected = Uint8Array.from({ length: 3 * plane }, (_, i) => {
        const channel = Math.floor(i / plane);
        const alpha = pixels[3 * plane + (i % plane)] / 255;
        return Math.round(pixels[i] * alpha + background[channel] * (1 - alpha));
      });
      const got = flat.data as Uint8Array;
      // C++ computes in float32, this in float64: a value on .5 may round either way, never further.
      const off = Array.from(expected).filter((value, i) => Math.abs(value - got[i]) > 1);
      expect(off, `background ${background}`).to.deep.equal([]);
    }
    const rgb = await decodeImage(bytes, { mode: 'RGB' });
    expect(await decodeImage(bytes, { mode: 'RGB', transforms: [T.flattenAlpha()] })).to.deep.equal(rgb);
  });
});
