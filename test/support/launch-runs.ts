// Runs of `firebrand launch` over test/support/distributed-child.ts, and what
// their ranks print, for the tests of data-parallel training.
import { expect } from 'chai';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
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

/** `command args` in the background; resolves with its exit code and output. */
export function startProcess(
  command: string,
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const started = spawn(command, args);
    let stdout = '';
    let stderr = '';
    started.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    started.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    started.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The python whose torchrun the tests use (BENCH_PYTHON, else Debian's), or why this machine cannot run it. */
export function torchrunPython(): { python: string } | { why: string } {
  const python = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
  // torchrun's rendezvous makes TCPStores with PyTorch's default, libuv, which Debian's torch 2.x lacks.
  const probe = spawnSync(
    python,
    ['-c', "import torch.distributed.run, torch.distributed as d; d.TCPStore('127.0.0.1', 0, 1, True)"],
    { encoding: 'utf8' },
  );
  if (probe.status === 0) return { python };
  const why = /libuv/.test(probe.stderr)
    ? "its torch is built without libuv, which torchrun's rendezvous stores ask for"
    : `it has no torch.distributed.run (apt-get install python3-torch): ${probe.stderr.trim().split('\n').at(-1)}`;
  return { why: `${python}: ${why}` };
}

/** The trainer_state.json of the latest checkpoint under `outputDir`. */
export function latestTrainerState(outputDir: string): {
  worldSize: number;
  globalStep: number;
  history: { epochs: { globalStep: number }[] };
} {
  const checkpoints = path.join(outputDir, 'checkpoints');
  const latest = fs.readFileSync(path.join(checkpoints, 'latest'), 'utf8').trim();
  return JSON.parse(fs.readFileSync(path.join(checkpoints, latest, 'trainer_state.json'), 'utf8'));
}

/**
 * Resolves once the checkpoint `step-<step>` exists under `outputDir`; rejects after `seconds` (a safety net:
 * the run it waits for failed), so that the test's cleanup still runs.
 */
export async function checkpointSaved(outputDir: string, step: number, seconds = 120): Promise<void> {
  const folder = path.join(outputDir, 'checkpoints', `step-${step}`);
  const deadline = Date.now() + seconds * 1000;
  while (!fs.existsSync(folder)) {
    if (Date.now() > deadline) throw new Error(`${folder} was not saved within ${seconds} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether a socket of this machine listens on TCP `port` (Linux's /proc/net/tcp and tcp6: state 0A). */
function listening(port: number): boolean {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].some((table) => {
    const lines = fs.existsSync(table) ? fs.readFileSync(table, 'utf8').split('\n').slice(1) : [];
    return lines.some((line) => {
      const fields = line.trim().split(/\s+/);
      return fields.length > 3 && fields[1].endsWith(`:${hexPort}`) && fields[3] === '0A';
    });
  });
}

/** Waits until something listens on `port` (a server started in another process); `seconds` is a safety net. */
export async function listeningOn(port: number, seconds = 120): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!listening(port)) {
    if (Date.now() > deadline) throw new Error(`nothing listened on port ${port} within ${seconds} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Kills the process group a detached child leads (a node that dies whole); nothing if it is gone. */
export function killGroup(leader: ChildProcess): void {
  try {
    process.kill(-(leader.pid as number), 'SIGKILL');
  } catch {
    // already gone
  }
}
