// The did-you-mean of every error about a name a user wrote (fields, losses,
// layer types, metrics, run-file keys): the known name closest by edit
// distance, when it is close enough to be what they meant.

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      const same = a[i - 1].toLowerCase() === b[j - 1].toLowerCase();
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** The candidate closest to `word`, or '' when none is within max(2, a third of its length) edits. */
export function closestMatch(word: string, candidates: readonly string[]): string {
  let best = '';
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : '';
}

/** " (did you mean 'x'?)" for the closest candidate, or ''. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const suggestion = closestMatch(word, candidates);
  return suggestion ? ` (did you mean '${suggestion}'?)` : '';
}
