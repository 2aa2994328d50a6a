// Runs of `firebrand launch` over test/support/distributed-child.ts, and what
// their ranks print, for the tests of data-parallel training.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export const cli = path.join(__dirname, '..', '..', 'src', 'cli', 'main.js');
export const child = path.join(__dirname, 'distributed-child.js');

export interface RankReport {
  rank: number;
  worldSize?: number;
  history?: { epochs: { loss: number; valLoss: number; globalStep: number }[] };
  weights?: Record<string, number[]>;
  error?: { code: string; message: string };
  seconds?: number;
  optimizerStateBytes?: number;
}

/** Each rank's JSON line from launcher output ("[rank R] {...}"), by rank. */
export function reports(stdout: string): RankReport[] {
  return stdout
    .trim()
    .split('\n')
    .filter((line) => /^(\[rank \d+\] )?\{"rank"/.test(line))
    .map((line) => JSON.parse(line.replace(/^\[rank \d+\] /, '')) as RankReport)
    .sort((a, b) => a.rank - b.rank);
}

export function launchArgs(port: number, extra: string[], childArgs: string[]): string[] {
  return [cli, 'launch', '--master-port', String(port), ...extra, child, ...childArgs];
}

export function runLaunch(port: number, extra: string[], childArgs: string[] = ['train']) {
  return spawnSync(process.execPath, launchArgs(port, extra, childArgs), { encoding: 'utf8', timeout: 60_000 });
}

export function maxAbsDifference(a: Record<string, number[]>, b: Record<string, number[]>): number {
  expect(Object.keys(a).sort()).to.deep.equal(Object.keys(b).sort());
  let max = 0;
  for (const name of Object.keys(a)) {
    expect(a[name].length).to.equal(b[name].length);
    a[name].forEach((value, i) => (max = Math.max(max, Math.abs(value - b[name][i]))));
  }
  return max;
}
