// A squeeze-and-excitation block on channels-last maps (test/channels-last-maps.test.ts): its pool and its
// product with the per-sample gate, a product with a learned [1, C, 1, 1] scale, and max pools (ResNet's stem's,
// a strided, dilated, padded one, and one over 45 channels), which a lowered predict runs on
// firebrand's kernels.
import { F, nn, Parameter, type Tensor } from '../../src';

/** 13 channels: one AVX2 block of 8 and 5 more. */
export const CHANNELS = 13;
/** 45 channels, for a max pool: a block of 32, one of 8 and 5 more. */
export const WIDE = 45;
export const SHAPE = [3, 2, 5, 7];

export class GateNet extends nn.Module {
  stem = nn.conv2d(2, CHANNELS, 3, { padding: 1 });
  squeeze = nn.conv2d(CHANNELS, 4, 1);
  excite = nn.conv2d(4, CHANNELS, 1);
  widen = nn.conv2d(CHANNELS, WIDE, 1);
  pool = nn.adaptiveAvgPool2d(1);
  scale = nn.init.uniform_(new Parameter([1, CHANNELS, 1, 1]), { a: 0.5, b: 1.5 });
  forward(x: Tensor): Tensor[] {
    const y = this.stem.forward(x);
    const pooled = this.pool.forward(y);
    const gate = F.hardsigmoid(this.excite.forward(this.squeeze.forward(pooled).relu()));
    const gated = y.mul(gate);
    return [
      pooled,
      gated,
      this.scale.mul(gated),
      F.adaptiveAvgPool2d(gated, [1, 1]),
      F.maxPool2d(y, 3, { stride: 2, padding: 1 }),
      F.maxPool2d(y, [2, 3], { stride: [2, 1], padding: [1, 1], dilation: [3, 2] }),
      F.maxPool2d(this.widen.forward(y), 3, { stride: 2, padding: 1 }),
    ];
  }
}

export const gateInputs = () =>
  Float32Array.from({ length: SHAPE.reduce((a, b) => a * b, 1) }, (_, i) => Math.sin(i * 0.61) * 3 + 0.25);
