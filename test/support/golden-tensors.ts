// Golden fixtures' tensors by name: the group under a prefix ("grad.", "adamw3."),
// a whole state dict compared with one, a parameter's move in one step, the
// greedy tokens a causal LM generates, and the dtypes a safetensors file stores.
import { expect } from 'chai';
import fs from 'node:fs';

import type { NumericArray, TensorData, Trainer } from '../../src';
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

/**
 * generate's greedy tokens from the golden prompt (input_ids' first row), with the cache and without,
 * equal to the golden 'generated' (made with eos_token_id=None: no stop tokens here either).
 */
export async function expectGreedyTokens(trainer: Trainer, golden: Tensors): Promise<void> {
  const prompt = Array.from(golden.input_ids.data, Number).slice(0, golden.input_ids.shape[1]);
  const expected = Array.from(golden.generated.data, Number);
  for (const kvCache of [true, false]) {
    const tokens: number[] = [];
    const options = { maxNewTokens: expected.length, greedy: true, kvCache, stopTokens: [] };
    for await (const token of trainer.generate(prompt, options)) tokens.push(token);
    expect(tokens, `kvCache: ${kvCache}`).to.deep.equal(expected);
  }
}

/** The dtype of each tensor of a safetensors file, from its header. */
export function safetensorsDtypes(file: string): Record<string, string> {
  const bytes = fs.readFileSync(file);
  const length = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + length).toString('utf8')) as Record<string, { dtype?: string }>;
  return Object.fromEntries(
    Object.entries(header)
      .filter(([name]) => name !== '__metadata__')
      .map(([name, entry]) => [name, entry.dtype as string]),
  );
}
