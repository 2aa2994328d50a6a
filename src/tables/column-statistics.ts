// What scikit-learn fits on a column, computed as it computes it: the mean and
// median of the present values (float64), the most frequent value (the
// smallest on a tie, as SimpleImputer), and the sorted categories
// (OneHotEncoder's categories='auto': numbers by value, text by code point,
// a missing value last).

/** A column's cell as preprocessing sees it: a number, a text, or null where missing. */
export type Cell = number | string | null;

export function mean(values: number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** numpy.median: the middle value, or the mean of the two middle ones. */
export function median(values: number[]): number {
  const sorted = Float64Array.from(values).sort();
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Python's order: numbers by value, text by code point (JavaScript's default sort compares UTF-16 units). */
export function compareCells(a: Cell, b: Cell): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const [x, y] = [String(a), String(b)];
  const [left, right] = [Array.from(x), Array.from(y)];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const difference = (left[i].codePointAt(0) as number) - (right[i].codePointAt(0) as number);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/** The distinct values, sorted. */
export function categoriesOf(values: Cell[]): Cell[] {
  return [...new Set(values)].sort(compareCells);
}

/** The most frequent value; on a tie the smallest (SimpleImputer's most_frequent). */
export function mostFrequent(values: Cell[]): Cell {
  const counts = new Map<Cell, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  let best: Cell = null;
  let bestCount = 0;
  for (const [value, count] of counts) {
    if (count > bestCount || (count === bestCount && compareCells(value, best) < 0)) {
      best = value;
      bestCount = count;
    }
  }
  return best;
}
