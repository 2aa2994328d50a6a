// The attention module test/inference-attention.test.ts and its child predict with, and the shapes they take.
import { F, nn, type Tensor } from '../../src';

export interface AttendShape {
  heads: number;
  headDim: number;
  queries: number;
  keys: number;
  isCausal: boolean;
}

/** Attention of the last `queries` positions' queries over the first `keys` positions' keys and values. */
export class Attend extends nn.Module {
  project: ReturnType<typeof nn.linear>;

  constructor(private readonly shape: AttendShape) {
    super();
    const width = shape.heads * shape.headDim;
    this.project = nn.linear(width, 3 * width);
  }

  forward(x: Tensor): Tensor {
    const { heads, headDim, queries, keys, isCausal } = this.shape;
    const width = heads * headDim;
    const [q, k, v] = this.project.forward(x).split([width, width, width], 2);
    const perHead = (t: Tensor, start: number, length: number) =>
      t.narrow(1, start, length).view(x.size(0), length, heads, headDim).transpose(1, 2);
    const total = Math.max(queries, keys);
    const y = F.scaledDotProductAttention(
      perHead(q, total - queries, queries),
      perHead(k, 0, keys),
      perHead(v, 0, keys),
      { isCausal },
    );
    return y.transpose(1, 2).contiguous().view(x.size(0), queries, width);
  }
}

export const attendShapes: AttendShape[] = [
  // GPT-mini's heads, a causal triangle over whole tiles and blocks.
  { heads: 4, headDim: 32, queries: 128, keys: 128, isCausal: true },
  // Tiles and key blocks cut short (37 positions), two lanes of 16 values a pass.
  { heads: 3, headDim: 16, queries: 37, keys: 37, isCausal: true },
  // Fewer queries than keys, every key seen; 80 columns: a pass of 64 and one of 16.
  { heads: 2, headDim: 80, queries: 5, keys: 70, isCausal: false },
  // The triangle at the top left when keys outnumber queries (PyTorch's is_causal); 48 and 128 columns.
  { heads: 2, headDim: 48, queries: 9, keys: 40, isCausal: true },
  { heads: 1, headDim: 128, queries: 20, keys: 20, isCausal: true },
];

export const describeShape = (s: AttendShape) =>
  `${s.heads} heads of ${s.headDim}, ${s.queries} queries over ${s.keys} keys${s.isCausal ? ', causal' : ''}`;

/** A batch of 3 sequences of the shape's positions. */
export function inputsFor(shape: AttendShape): { data: Float32Array; shape: number[] } {
  const width = shape.heads * shape.headDim;
  const positions = Math.max(shape.queries, shape.keys);
  return {
    data: Float32Array.from({ length: 3 * positions * width }, (_, i) => Math.sin(i * 0.37) * 2),
    shape: [3, positions, width],
  };
}
