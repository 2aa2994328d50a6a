// The suite's one closeness check: numbers, lists or tensors against a reference,
// element by element, naming the worst element when they differ.
import { expect } from 'chai';

import type { NumericArray, TensorData } from '../../src';

type Values = number | ArrayLike<number | bigint> | TensorData<NumericArray>;

export interface Closeness {
  /** The largest allowed error (default 1e-5). */
  tolerance?: number;
  /** Whether the error is absolute; by default it is relative, |a - e| / max(1, |e|) (absolute near zero). */
  absolute?: boolean;
}

const isTensor = (values: Values): values is TensorData<NumericArray> =>
  typeof values === 'object' && 'shape' in values;

function elements(values: Values): ArrayLike<number | bigint> {
  if (typeof values === 'number') return [values];
  return isTensor(values) ? values.data : values;
}

/** Every element of `actual` within `tolerance` of `expected`'s; tensors must have its shape. */
export function expectClose(
  actual: Values,
  expected: Values,
  what: string,
  { tolerance = 1e-5, absolute = false }: Closeness = {},
): void {
  if (isTensor(expected)) {
    expect(isTensor(actual) ? actual.shape : undefined, `${what} shape`).to.deep.equal(expected.shape);
  }
  const got = elements(actual);
  const want = elements(expected);
  expect(got.length, `${what}: element count`).to.equal(want.length);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < want.length; i += 1) {
    const a = Number(got[i]);
    const e = Number(want[i]);
    const error = Math.abs(a - e) / (absolute ? 1 : Math.max(1, Math.abs(e)));
    if (Number.isNaN(error)) {
      [worst, at] = [Infinity, i];
      break;
    }
    if (error > worst) [worst, at] = [error, i];
  }
  const where = typeof expected === 'number' ? '' : ` at element ${at}`;
  const message = `${what}: worst ${absolute ? 'absolute' : 'relative'} error${where} (${Number(got[at] ?? NaN)} vs ${Number(want[at] ?? NaN)})`;
  expect(worst, message).to.be.at.most(tolerance);
}
