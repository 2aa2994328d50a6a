// The tensors a module's forward sees while it is traced: symbolic values that
// record each operation into the trace (as torch.fx's Proxy does). No data
// flows here; C++ runs the recorded graph at every step.
import { firebrandError } from '../../errors';
import { activeTrace, callerLine, GraphArg, Trace } from './trace';

/** A dimension index; negative counts from the end, as in PyTorch. */
export type Dim = number;
/** A size: a number, or a size read from a tensor while tracing (x.size(0)), which follows the batch at run time. */
export type SizeArg = number | SymInt;
export type DtypeName =
  'float32' | 'float64' | 'float16' | 'bfloat16' | 'int64' | 'int32' | 'int16' | 'int8' | 'uint8' | 'bool';

/** Operands of a traced op: tensors, sizes, numbers, flags, names, lists of them. */
export type OpArg = Tensor | SymInt | number | boolean | string | null | undefined | readonly OpArg[];

function encode(trace: Trace, value: OpArg): GraphArg {
  if (value instanceof Tensor || value instanceof SymInt) return { v: value.valueIn(trace) };
  if (Array.isArray(value)) return value.map((item) => encode(trace, item));
  if (value === undefined) return null;
  return value as GraphArg;
}

/** Records `op` over `args` in the running trace; the new value's node index. */
export function recordOp(op: string, args: readonly OpArg[]): { trace: Trace; id: number } {
  const trace = activeTrace(op);
  return {
    trace,
    id: trace.record(
      op,
      args.map((arg) => encode(trace, arg)),
    ),
  };
}

const tensorOp = (op: string, ...args: OpArg[]): Tensor => new Tensor(recordOp(op, args));

/** Pieces taken from a list beyond this are refused: a loop over split(int)'s pieces could not end. */
const MOST_PIECES = 4096;

/**
 * The pieces of torch.split with an int size, whose number is known only when the model runs:
 * destructure those forward expects (`const [q, k, v] = x.split(16, 2)`); the model then checks at
 * every step that there are that many, as Python's unpacking does.
 */
export function splitPieces(x: Tensor, size: number, dim: Dim): Iterable<Tensor> {
  const { trace, id } = recordOp('splitSize', [x, size, dim, null]);
  const list = new Tensor({ trace, id });
  return {
    [Symbol.iterator]: () => {
      let taken = 0;
      const settle = () => {
        trace.nodes[id].args[3] = taken;
        return { done: true as const, value: undefined };
      };
      return {
        next: () => {
          if (taken >= MOST_PIECES) {
            throw firebrandError(
              'ERR_FIREBRAND_TRACED_VALUE',
              `${callerLine() ?? 'forward'}: split(${size}, ${dim}) has as many pieces as the tensor's size gives, known only when the ` +
                'model runs: destructure the pieces forward expects (const [a, b] = x.split(size, dim)), or pass the sizes as a list',
            );
          }
          trace.nodes[id].args[3] = taken + 1;
          return { done: false, value: tensorOp('listItem', list, taken++) };
        },
        return: settle,
      };
    },
  };
}

/** `count` tensors out of an op that returns a list (split, chunk, max over a dim). */
export function tensorsOp(op: string, count: number, ...args: OpArg[]): Tensor[] {
  const list = new Tensor(recordOp(op, args));
  return Array.from({ length: count }, (_, index) => tensorOp('listItem', list, index));
}

interface TracedValue {
  trace: Trace;
  id: number;
}

function valueIn(origin: TracedValue, trace: Trace): number {
  if (origin.trace !== trace) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${trace.scope || 'forward'}: a tensor from another trace was used (kept in a field between calls?); forward must build every tensor from its inputs`,
    );
  }
  return origin.id;
}

/**
 * A size read from a tensor while tracing. Passed to an op (view, reshape, expand, arange, ...) it is
 * read again at every step, so it follows the batch; arithmetic goes through its methods. It cannot
 * become a JavaScript number: the size is known only when the model runs.
 */
export class SymInt {
  /** @internal */
  constructor(private readonly origin: TracedValue) {}

  /** @internal */
  valueIn(trace: Trace): number {
    return valueIn(this.origin, trace);
  }

  private arith(op: string, other: SizeArg): SymInt {
    return new SymInt(recordOp(op, [this, other]));
  }

  add(other: SizeArg): SymInt {
    return this.arith('intAdd', other);
  }
  sub(other: SizeArg): SymInt {
    return this.arith('intSub', other);
  }
  mul(other: SizeArg): SymInt {
    return this.arith('intMul', other);
  }
  /** Floor division, as Python's //. */
  floorDiv(other: SizeArg): SymInt {
    return this.arith('intFloorDiv', other);
  }

  [Symbol.toPrimitive](): never {
    throw firebrandError(
      'ERR_FIREBRAND_TRACED_VALUE',
      `${callerLine() ?? 'forward'}: a traced size (x.size(d)) is known only when the model runs: pass it to an op, or use its add/sub/mul/floorDiv methods`,
    );
  }
}

/**
 * A tensor inside a traced forward: an op's result, or a module's parameter or buffer (read where
 * forward uses it). Methods follow torch.Tensor's names (camelCase) and defaults.
 */
export class Tensor {
  /** @internal Parameters and buffers have no origin: the trace reads them by module path. */
  constructor(private readonly origin?: TracedValue) {}

  /** @internal The node of this tensor in `trace`. */
  valueIn(trace: Trace): number {
    return this.origin ? valueIn(this.origin, trace) : trace.stateNode(this);
  }

  [Symbol.toPrimitive](hint: string): never {
    const use = hint === 'string' ? 'as a string' : 'as a number (a comparison or arithmetic)';
    throw firebrandError(
      'ERR_FIREBRAND_TRACED_VALUE',
      `${callerLine() ?? 'forward'}: a traced tensor used ${use} has no value in JavaScript: forward is recorded once and runs in C++, ` +
        "so an 'if' or loop cannot depend on a tensor's values (use torch.where(), maskedFill() or clamp(), and tensor methods: x.gt(0))",
    );
  }

  /** The size of dimension `dim`, read at every step (it follows the batch). */
  size(dim: Dim): SymInt {
    return new SymInt(recordOp('size', [this, dim]));
  }

  // Arithmetic (other may be a tensor or a number; broadcasting as in PyTorch).
  add(other: Tensor | number, alpha = 1): Tensor {
    return tensorOp('add', this, other, alpha);
  }
  sub(other: Tensor | number, alpha = 1): Tensor {
    return tensorOp('sub', this, other, alpha);
  }
  mul(other: Tensor | number): Tensor {
    return tensorOp('mul', this, other);
  }
  div(other: Tensor | number, roundingMode: 'trunc' | 'floor' | null = null): Tensor {
    return tensorOp('div', this, other, roundingMode);
  }
  pow(exponent: Tensor | number): Tensor {
    return tensorOp('pow', this, exponent);
  }
  neg(): Tensor {
    return tensorOp('neg', this);
  }
  matmul(other: Tensor): Tensor {
    return tensorOp('matmul', this, other);
  }
  bmm(other: Tensor): Tensor {
    return tensorOp('bmm', this, other);
  }

  // Reductions: dim null reduces every dimension.
  sum(dim: Dim | Dim[] | null = null, keepdim = false): Tensor {
    return tensorOp('sum', this, dim, keepdim);
  }
  mean(dim: Dim | Dim[] | null = null, keepdim = false): Tensor {
    return tensorOp('mean', this, dim, keepdim);
  }
  amax(dim: Dim | Dim[] = [], keepdim = false): Tensor {
    return tensorOp('amax', this, dim, keepdim);
  }
  amin(dim: Dim | Dim[] = [], keepdim = false): Tensor {
    return tensorOp('amin', this, dim, keepdim);
  }
  /** The maximum of every element; max(dim) gives [values, indices] as torch.max does. */
  max(): Tensor;
  max(dim: Dim, keepdim?: boolean): [Tensor, Tensor];
  max(dim?: Dim, keepdim = false): Tensor | [Tensor, Tensor] {
    return dim === undefined
      ? tensorOp('maxAll', this)
      : (tensorsOp('maxDim', 2, this, dim, keepdim) as [Tensor, Tensor]);
  }
  min(): Tensor;
  min(dim: Dim, keepdim?: boolean): [Tensor, Tensor];
  min(dim?: Dim, keepdim = false): Tensor | [Tensor, Tensor] {
    return dim === undefined
      ? tensorOp('minAll', this)
      : (tensorsOp('minDim', 2, this, dim, keepdim) as [Tensor, Tensor]);
  }
  argmax(dim: Dim | null = null, keepdim = false): Tensor {
    return tensorOp('argmax', this, dim, keepdim);
  }
  argmin(dim: Dim | null = null, keepdim = false): Tensor {
    return tensorOp('argmin', this, dim, keepdim);
  }
  logsumexp(dim: Dim | Dim[], keepdim = false): Tensor {
    return tensorOp('logsumexp', this, dim, keepdim);
  }
  /** Running sums along dim (torch.cumsum). */
  cumsum(dim: Dim): Tensor {
    return tensorOp('cumsum', this, dim);
  }
  /** Variance with Bessel's correction by default (correction = 1), as torch.var. */
  var(
    dim: Dim | Dim[] | null = null,
    { correction = 1, keepdim = false }: { correction?: number; keepdim?: boolean } = {},
  ): Tensor {
    return tensorOp('var', this, dim, correction, keepdim);
  }
  std(
    dim: Dim | Dim[] | null = null,
    { correction = 1, keepdim = false }: { correction?: number; keepdim?: boolean } = {},
  ): Tensor {
    return tensorOp('std', this, dim, correction, keepdim);
  }

  // Shape.
  reshape(...shape: SizeArg[]): Tensor {
    return tensorOp('reshape', this, shape);
  }
  view(...shape: SizeArg[]): Tensor {
    return tensorOp('view', this, shape);
  }
  flatten(startDim: Dim = 0, endDim: Dim = -1): Tensor {
    return tensorOp('flatten', this, startDim, endDim);
  }
  unflatten(dim: Dim, sizes: SizeArg[]): Tensor {
    return tensorOp('unflatten', this, dim, sizes);
  }
  permute(...dims: Dim[]): Tensor {
    return tensorOp('permute', this, dims);
  }
  transpose(dim0: Dim, dim1: Dim): Tensor {
    return tensorOp('transpose', this, dim0, dim1);
  }
  /** Swaps the last two dimensions (x.mT). */
  get mT(): Tensor {
    return this.transpose(-2, -1);
  }
  unsqueeze(dim: Dim): Tensor {
    return tensorOp('unsqueeze', this, dim);
  }
  /** Removes dimension `dim` (or every dimension of size 1) when its size is 1. */
  squeeze(dim: Dim | null = null): Tensor {
    return tensorOp('squeeze', this, dim);
  }
  expand(...sizes: SizeArg[]): Tensor {
    return tensorOp('expand', this, sizes);
  }
  expandAs(other: Tensor): Tensor {
    return tensorOp('expandAs', this, other);
  }
  repeat(...repeats: SizeArg[]): Tensor {
    return tensorOp('repeat', this, repeats);
  }
  contiguous(): Tensor {
    return tensorOp('contiguous', this);
  }
  /**
   * Pieces along dim, as torch.split: of the given sizes (a list), or each `size` long (the last may be
   * shorter), destructured: `const [q, k, v] = x.split(this.nEmbd, 2)`.
   */
  split(sizes: number[], dim?: Dim): Tensor[];
  split(size: number, dim?: Dim): Iterable<Tensor>;
  split(sizes: number | number[], dim: Dim = 0): Tensor[] | Iterable<Tensor> {
    return typeof sizes === 'number'
      ? splitPieces(this, sizes, dim)
      : tensorsOp('splitWithSizes', sizes.length, this, sizes, dim);
  }
  chunk(chunks: number, dim: Dim = 0): Tensor[] {
    return tensorsOp('chunk', chunks, this, chunks, dim);
  }
  narrow(dim: Dim, start: SizeArg, length: SizeArg): Tensor {
    return tensorOp('narrow', this, dim, start, length);
  }
  /** x[..., start:end:step] along dim; end null runs to the end. */
  slice(dim: Dim, start: SizeArg | null = null, end: SizeArg | null = null, step = 1): Tensor {
    return tensorOp('slice', this, dim, start, end, step);
  }
  /** x.select(dim, index): removes dim, keeping one index (x[:, i]). */
  select(dim: Dim, index: SizeArg): Tensor {
    return tensorOp('select', this, dim, index);
  }
  indexSelect(dim: Dim, index: Tensor): Tensor {
    return tensorOp('indexSelect', this, dim, index);
  }
  gather(dim: Dim, index: Tensor): Tensor {
    return tensorOp('gather', this, dim, index);
  }

  // Elementwise.
  exp(): Tensor {
    return tensorOp('exp', this);
  }
  log(): Tensor {
    return tensorOp('log', this);
  }
  sqrt(): Tensor {
    return tensorOp('sqrt', this);
  }
  rsqrt(): Tensor {
    return tensorOp('rsqrt', this);
  }
  abs(): Tensor {
    return tensorOp('abs', this);
  }
  sin(): Tensor {
    return tensorOp('sin', this);
  }
  cos(): Tensor {
    return tensorOp('cos', this);
  }
  clamp(min: number | null = null, max: number | null = null): Tensor {
    return tensorOp('clamp', this, min, max);
  }
  maskedFill(mask: Tensor, value: number): Tensor {
    return tensorOp('maskedFill', this, mask, value);
  }
  tril(diagonal = 0): Tensor {
    return tensorOp('tril', this, diagonal);
  }
  triu(diagonal = 0): Tensor {
    return tensorOp('triu', this, diagonal);
  }
  relu(): Tensor {
    return tensorOp('relu', this);
  }
  sigmoid(): Tensor {
    return tensorOp('sigmoid', this);
  }
  tanh(): Tensor {
    return tensorOp('tanh', this);
  }
  softmax(dim: Dim): Tensor {
    return tensorOp('softmax', this, dim);
  }
  logSoftmax(dim: Dim): Tensor {
    return tensorOp('logSoftmax', this, dim);
  }

  // Comparisons give bool tensors.
  eq(other: Tensor | number): Tensor {
    return tensorOp('eq', this, other);
  }
  ne(other: Tensor | number): Tensor {
    return tensorOp('ne', this, other);
  }
  lt(other: Tensor | number): Tensor {
    return tensorOp('lt', this, other);
  }
  le(other: Tensor | number): Tensor {
    return tensorOp('le', this, other);
  }
  gt(other: Tensor | number): Tensor {
    return tensorOp('gt', this, other);
  }
  ge(other: Tensor | number): Tensor {
    return tensorOp('ge', this, other);
  }
  logicalNot(): Tensor {
    return tensorOp('logicalNot', this);
  }

  /** The tensor as another dtype (x.to(torch.float32)). */
  to(dtype: DtypeName): Tensor {
    return tensorOp('toDtype', this, dtype);
  }
  /** The tensor as other's dtype (x.type_as(other)). */
  typeAs(other: Tensor): Tensor {
    return tensorOp('typeAs', this, other);
  }
  float(): Tensor {
    return this.to('float32');
  }
  long(): Tensor {
    return this.to('int64');
  }
  bool(): Tensor {
    return this.to('bool');
  }
  /** The same values, cut from the autograd graph. */
  detach(): Tensor {
    return tensorOp('detach', this);
  }
}

/** Records an op that returns one tensor (for the functional namespace and layers). */
export const op = tensorOp;
