// What the side-by-side benches share: a child process's measure (the last
// line it prints, as JSON) and the median of rounds.
import { spawnSync } from 'node:child_process';

/** Runs `command` and returns the JSON of its last stdout line; a failing run is an error with its stderr. */
export function lastJsonOf<Measure>(command: string, args: string[]): Measure {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) as string) as Measure;
}

/** The median of some numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
