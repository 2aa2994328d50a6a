// The LayerNorm model test/layer-norm-lowering.test.ts and its child predict with.
import { nn, type Layer, type Tensor } from '../../src';

export const WIDTH = 280;
export const ROWS = 5;

/** LayerNorms over 280 columns (whole passes of 32, one of 16, a tail of 8), 7 (a tail alone) and 40 (no affine). */
export class Norms extends nn.Module {
  wide = nn.layerNorm(WIDTH, { eps: 1e-6 });
  narrow = nn.layerNorm(7);
  plain = nn.layerNorm(40, { elementwiseAffine: false });
  constructor() {
    super();
    for (const norm of [this.wide, this.narrow] as Layer[]) {
      nn.init.normal_(norm.weight, { mean: 1, std: 0.5 });
      nn.init.normal_(norm.bias, { std: 0.5 });
    }
  }
  forward(x: Tensor): Tensor[] {
    const a = this.wide.forward(x);
    const b = this.narrow.forward(a.view(x.size(0), (ROWS * WIDTH) / 7, 7));
    const c = this.plain.forward(
      x
        .mul(3)
        .add(1)
        .view(x.size(0), (ROWS * WIDTH) / 40, 40),
    );
    return [a, b, c];
  }
}

/** Inputs of `batch` samples: rows whose means and spreads differ. */
export function normInputs(batch: number): Float32Array {
  return Float32Array.from({ length: batch * ROWS * WIDTH }, (_, i) => 5 * Math.sin(i * 0.37) + (i % 17) * 0.3);
}
