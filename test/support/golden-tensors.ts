// Golden fixtures' tensors by name: the group under a prefix ("grad.", "adamw3."),
// a whole state dict compared with one, and a parameter's move in one step.
import { expect } from 'chai';

import type { NumericArray, TensorData } from '../../src';
import { expectClose } from './expect-close';

export type Tensors = Record<string, TensorData<NumericArray>>;

/** The tensors whose names start with `prefix`, under the rest of their names. */
export function withPrefix(tensors: Tensors, prefix: string): Tensors {
  return Object.fromEntries(
    Object.entries(tensors)
      .filter(([name]) => name.startsWith(prefix))
      .map(([name, tensor]) => [name.slice(prefix.length), tensor]),
  );
}

/** The same names (in any order: a file's keys are sorted, a state dict's are PyTorch's) and close values. */
export function expectStateClose(actual: Tensors, expected: Tensors, what: string): void {
  expect(Object.keys(actual).sort(), `${what}: state-dict keys`).to.deep.equal(Object.keys(expected).sort());
  for (const name of Object.keys(expected)) expectClose(actual[name], expected[name], `${what} ${name}`);
}

/** before - after: what one SGD step of lr 1 took from a parameter, its gradient. */
export function stepTaken(before: TensorData<NumericArray>, after: TensorData<NumericArray>): TensorData<Float64Array> {
  return {
    shape: before.shape,
    data: Float64Array.from(before.data as Float32Array, (value, i) => value - Number(after.data[i])),
  };
}
