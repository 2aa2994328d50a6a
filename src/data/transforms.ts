// Batch transforms, run in C++ by the loader on whole batches (see
// Dataset.withTransforms). Random ones are seeded by (seed, epoch, batch), so
// the same seed gives the same batches.
import type { OptionFields } from '../native';

export interface TransformSpec extends OptionFields {
  name: 'normalize' | 'cast' | 'randomHorizontalFlip' | 'randomCrop' | 'oneHot';
  /** The batch field transformed. Default 'input' ('target' for oneHot). */
  field?: string;
}

export type Dtype = 'float32' | 'float64' | 'float16' | 'bfloat16' | 'int64' | 'int32' | 'uint8';

export const transforms = {
  /** (x - mean) / std per channel (dimension 1 of the batch), as torchvision's Normalize. */
  normalize(options: { mean: number | number[]; std: number | number[]; field?: string }): TransformSpec {
    return { name: 'normalize', ...options };
  },
  /** Converts the field to `dtype` (default float32). */
  cast(options: { dtype?: Dtype; field?: string } = {}): TransformSpec {
    return { name: 'cast', ...options };
  },
  /** Mirrors each sample [..., H, W] left-right with probability p (default 0.5). */
  randomHorizontalFlip(options: { p?: number; field?: string } = {}): TransformSpec {
    return { name: 'randomHorizontalFlip', ...options };
  },
  /** Pads H and W with `padding` zeros, then crops `size` at a random offset per sample, as torchvision's RandomCrop. */
  randomCrop(options: { size: number | [number, number]; padding?: number; field?: string }): TransformSpec {
    return { name: 'randomCrop', ...options };
  },
  /** Integer class labels to float32 one-hot rows of `numClasses`. */
  oneHot(options: { numClasses: number; field?: string }): TransformSpec {
    return { name: 'oneHot', ...options };
  },
};
