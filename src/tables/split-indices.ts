// Which items go to the training and which to the validation part of a split:
// what torch.utils.data.random_split gives with a generator seeded `seed`,
// over the items, over each label's items (stratified: both parts hold each
// label in the split's proportion), or over the groups (grouped: a group's
// items stay together in one part). Table.split and Dataset.split both use it.
import { native } from '../native';
import { categoriesOf, type Cell } from './column-statistics';

/** random_split's [train, validation] indices of `count` items. */
export function randomSplitIndices(count: number, fractions: [number, number], seed: number): [number[], number[]] {
  const items = native.NativeDataset.fromFields({
    item: { data: Float64Array.from({ length: count }, (_, i) => i), shape: [count] },
  });
  const parts = items.split(fractions[0], fractions[1], seed);
  return parts.map((part) => Array.from(part.fields().item.data as Float64Array)) as [number[], number[]];
}

/**
 * [train, validation] indices of the items whose labels (stratify) or groups are `values`, each part in the
 * items' order.
 */
export function splitIndicesBy(
  values: Cell[],
  by: 'stratify' | 'groups',
  fractions: [number, number],
  seed: number,
): [number[], number[]] {
  const parts: [number[], number[]] = [[], []];
  const itemsOf = new Map<Cell, number[]>();
  values.forEach((value, item) => itemsOf.set(value, [...(itemsOf.get(value) ?? []), item]));
  const keys = categoriesOf(values);
  if (by === 'stratify') {
    for (const key of keys) {
      const items = itemsOf.get(key) as number[];
      randomSplitIndices(items.length, fractions, seed).forEach((indices, part) =>
        parts[part].push(...indices.map((i) => items[i])),
      );
    }
  } else {
    randomSplitIndices(keys.length, fractions, seed).forEach((indices, part) =>
      parts[part].push(...indices.flatMap((i) => itemsOf.get(keys[i]) as number[])),
    );
  }
  return [parts[0].sort((a, b) => a - b), parts[1].sort((a, b) => a - b)];
}
