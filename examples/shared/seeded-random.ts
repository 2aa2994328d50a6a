// A seeded generator of numbers in [0, 1) for the examples' synthetic data: mulberry32, 32-bit
// integer arithmetic with a period of 2^32, so that different seeds give different streams (a
// linear-congruential step in doubles repeated after ~10k draws, and seeds 1 and 2 shared a cycle).
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
