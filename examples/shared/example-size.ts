// How much an example trains, from the environment as the demo's DEMO_EPOCHS: EXAMPLE_EPOCHS and,
// where it reads a data set, EXAMPLE_TRAIN_SAMPLES. The tests set them small, so that each example
// runs in seconds even on a busy machine; unset, an example trains to the results its header names.
export function exampleSize(name: 'EXAMPLE_EPOCHS' | 'EXAMPLE_TRAIN_SAMPLES', fallback: number): number {
  const text = process.env[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}=${text}: expected a whole number >= 1`);
  return value;
}
