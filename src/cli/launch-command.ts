// `firebrand launch`: torchrun for Node scripts. Starts --nproc-per-node
// processes with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, GROUP_RANK), prefixes their
// output with their rank, and when one fails stops the others and exits
// non-zero naming the cause (rank-failures.ts).
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

import { runtimeInfo } from '../runtime';
import { integerFlag as integerOption } from './command-flags';
import { meetNodes } from './node-rendezvous';
import { rootCause, stoppedRanks, type RankProcess } from './rank-failures';
import { UsageError } from './usage-error';

export const LAUNCH_USAGE = `Usage: firebrand launch --nproc-per-node N|auto|gpu|cpu [--standalone | --nnodes M --node-rank R --master-addr HOST --master-port P | --nnodes M --rdzv-backend c10d --rdzv-endpoint HOST[:PORT] --rdzv-id ID] [--max-restarts K] script.js [args]

Starts N processes of script.js on this node, each with torchrun's environment variables, and forwards
their output prefixed by [rank R]. If one exits with an error, the others are stopped and launch exits
non-zero, naming the cause: a rank stopped by a signal, else the first error a rank recorded that is its
own (not a collective's failure caused by a peer), else the rank that exited first; with --max-restarts K, the ranks are started again (up to
K times, TORCHELASTIC_RESTART_COUNT telling them which attempt; resume from checkpoints to go on).
--nproc-per-node auto: one process per CUDA device, else per CPU (gpu: per CUDA device; cpu: per CPU).
--standalone: one node, its rendezvous at a free port of 127.0.0.1. Multi-node: run launch on every node with the same --nnodes, --master-addr and --master-port, and each
node's --node-rank; or, with --rdzv-backend c10d, the same command on every node: the nodes meet at
--rdzv-endpoint (port 29400 by default; the launcher whose address it is hosts the meeting), get their node
ranks in the order they join, and wait for each other up to --rdzv-conf join_timeout=S seconds (600); with
--nnodes MIN:MAX a start runs once MIN nodes have come and last_call_timeout (30 s) has passed without MAX,
and each restart meets again, so that the nodes left go on without a lost one.
As torchrun, each flag defaults to its PET_ variable (PET_NPROC_PER_NODE, PET_NNODES, PET_NODE_RANK,
PET_MASTER_ADDR, PET_MASTER_PORT, PET_MAX_RESTARTS, PET_RDZV_BACKEND, PET_RDZV_ENDPOINT, PET_RDZV_ID), which
Kubeflow's PyTorchJob and TrainJob set.`;

export interface LaunchOptions {
  nprocPerNode: number;
  nnodes: number;
  /** With --rdzv-backend c10d and --nnodes MIN:MAX: the fewest nodes a start runs with. Default nnodes. */
  minNodes?: number;
  nodeRank: number;
  masterAddr: string;
  masterPort: number;
  /** Times the ranks are started again after a failure (torchrun's --max-restarts). */
  maxRestarts: number;
  /** One node, rendezvous on 127.0.0.1 at a free port (torchrun's --standalone). */
  standalone?: boolean;
  /** 'c10d': node ranks and the master come from meeting at rdzvEndpoint (node-rendezvous.ts). Default 'static'. */
  rdzvBackend: 'static' | 'c10d';
  rdzvEndpoint?: { host: string; port: number };
  rdzvId: string;
  /** Seconds the nodes wait for each other at the rendezvous (torchrun's join_timeout). */
  rdzvJoinTimeout: number;
  /** Seconds the rendezvous waits for more nodes once the fewest have come (torchrun's last_call_timeout). */
  rdzvLastCall: number;
  script: string;
  args: string[];
}

/** A port free on 127.0.0.1 now (the system's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Seconds the other ranks get to exit after SIGTERM before SIGKILL. */
const GRACE_SECONDS = 5;

/**
 * torchrun's --nproc-per-node: a count, or 'gpu' (the CUDA devices), 'cpu' (the CPUs this process may
 * use) or 'auto' (the CUDA devices when there are, else the CPUs).
 */
function processesPerNode(text: string | undefined): number {
  if (text !== 'auto' && text !== 'gpu' && text !== 'cpu') return integerOption('--nproc-per-node', text, 1);
  if (text === 'cpu') return os.availableParallelism();
  const { cudaAvailable, cudaDeviceCount } = runtimeInfo();
  if (cudaAvailable && cudaDeviceCount > 0) return cudaDeviceCount;
  if (text === 'gpu') throw new UsageError('--nproc-per-node gpu: CUDA is not available here');
  return os.availableParallelism();
}

/** torchrun's PET_<FLAG> variables, as flags before the given ones (which win). */
function petFlags(env: NodeJS.ProcessEnv): string[] {
  const flags: [string, string][] = [
    ['PET_NPROC_PER_NODE', '--nproc-per-node'],
    ['PET_NNODES', '--nnodes'],
    ['PET_NODE_RANK', '--node-rank'],
    ['PET_MASTER_ADDR', '--master-addr'],
    ['PET_MASTER_PORT', '--master-port'],
    ['PET_MAX_RESTARTS', '--max-restarts'],
    ['PET_RDZV_BACKEND', '--rdzv-backend'],
    ['PET_RDZV_ENDPOINT', '--rdzv-endpoint'],
    ['PET_RDZV_ID', '--rdzv-id'],
  ];
  return flags.flatMap(([name, flag]) => (env[name] === undefined ? [] : [`${flag}=${env[name]}`]));
}

/** --nnodes N or torchrun's MIN:MAX, as [min, max]. */
function nodesOption(text: string | undefined): [number, number] {
  const [min, max = min] = (text ?? '').split(':');
  const range: [number, number] = [integerOption('--nnodes', min, 1), integerOption('--nnodes', max, 1)];
  if (range[0] > range[1]) throw new UsageError(`--nnodes: ${text} has its MIN above its MAX`);
  return range;
}

/** Parses launch's arguments (after the PET_ variables'); undefined means --help. */
export function parseLaunchArguments(given: string[], env: NodeJS.ProcessEnv = process.env): LaunchOptions | undefined {
  const options: Partial<LaunchOptions> = {
    nnodes: 1,
    nodeRank: 0,
    masterAddr: '127.0.0.1',
    masterPort: 29500,
    maxRestarts: 0,
    rdzvBackend: 'static',
    rdzvId: 'none',
    rdzvJoinTimeout: 600,
    rdzvLastCall: 30,
  };
  const named = new Set<string>();
  const pet = petFlags(env);
  const args = [...pet, ...given];
  let i = 0;
  for (; i < args.length && args[i].startsWith('-'); i++) {
    const [raw, inline] = args[i].split(/=(.*)/s, 2);
    const flag = raw.replace(/_/g, '-');
    if (i >= pet.length) named.add(flag); // a PET_ default (Kubeflow sets them all) is not a conflict
    const value = () => inline ?? args[++i];
    switch (flag) {
      case '--help':
      case '-h':
        return undefined;
      case '--nproc-per-node':
        options.nprocPerNode = processesPerNode(value());
        break;
      case '--nnodes':
        [options.minNodes, options.nnodes] = nodesOption(value());
        break;
      case '--max-restarts':
        options.maxRestarts = integerOption('--max-restarts', value(), 0);
        break;
      case '--node-rank':
        options.nodeRank = integerOption('--node-rank', value(), 0);
        break;
      case '--master-addr':
        options.masterAddr = value();
        if (!options.masterAddr) throw new UsageError('--master-addr: expected a host name or address');
        break;
      case '--master-port':
        options.masterPort = integerOption('--master-port', value(), 1);
        break;
      case '--rdzv-backend':
        options.rdzvBackend = rendezvousBackend(value());
        break;
      case '--rdzv-endpoint':
        options.rdzvEndpoint = endpointOption(value());
        break;
      case '--rdzv-id':
        options.rdzvId = value() ?? '';
        if (!options.rdzvId) throw new UsageError('--rdzv-id: expected a job id');
        break;
      case '--rdzv-conf':
        Object.assign(options, rendezvousConf(value()));
        break;
      case '--standalone':
        // torchrun's --standalone: one node, its rendezvous on this machine at a free port.
        options.standalone = true;
        break;
      default:
        throw new UsageError(`launch: unknown option ${flag}`);
    }
  }
  if (options.nprocPerNode === undefined) throw new UsageError('launch: --nproc-per-node is required');
  if (options.standalone && (options.nnodes !== 1 || options.nodeRank !== 0)) {
    throw new UsageError('--standalone runs one node: leave out --nnodes and --node-rank');
  }
  if (options.rdzvBackend === 'c10d') checkDynamic(options, named);
  else if (options.minNodes !== undefined && options.minNodes !== options.nnodes) {
    throw new UsageError(
      `--nnodes ${options.minNodes}:${options.nnodes} asks for elastic membership, which needs --rdzv-backend c10d`,
    );
  }
  if ((options.nodeRank as number) >= (options.nnodes as number)) {
    throw new UsageError(`--node-rank ${options.nodeRank} must be below --nnodes ${options.nnodes}`);
  }
  if (i >= args.length) throw new UsageError('launch: give the script to run');
  return { ...(options as LaunchOptions), script: args[i], args: args.slice(i + 1) };
}

function rendezvousBackend(text: string | undefined): 'static' | 'c10d' {
  if (text === 'static' || text === 'c10d') return text;
  throw new UsageError(`--rdzv-backend: 'static' or 'c10d', got ${text ?? 'nothing'}`);
}

/** HOST[:PORT], the port 29400 by default (torchrun's). */
function endpointOption(text: string | undefined): { host: string; port: number } {
  const match = /^(.+?)(?::(\d+))?$/.exec(text ?? '');
  if (match === null) throw new UsageError('--rdzv-endpoint: expected HOST[:PORT]');
  return { host: match[1], port: match[2] === undefined ? 29400 : integerOption('--rdzv-endpoint port', match[2], 1) };
}

/** --rdzv-conf join_timeout=S,last_call_timeout=S: the rendezvous settings launch reads. */
function rendezvousConf(text: string | undefined): Partial<LaunchOptions> {
  const conf: Partial<LaunchOptions> = {};
  for (const entry of (text ?? '').split(',')) {
    const [key, seconds] = entry.split('=');
    if (key === 'join_timeout') conf.rdzvJoinTimeout = integerOption('--rdzv-conf join_timeout', seconds, 1);
    else if (key === 'last_call_timeout')
      conf.rdzvLastCall = integerOption('--rdzv-conf last_call_timeout', seconds, 0);
    else throw new UsageError(`--rdzv-conf: launch reads join_timeout and last_call_timeout, got '${entry}'`);
  }
  return conf;
}

/** A dynamic rendezvous assigns node ranks and the master: they are not given too. */
function checkDynamic(options: Partial<LaunchOptions>, given: Set<string>): void {
  const fixed = ['--node-rank', '--master-addr', '--master-port', '--standalone'].filter((flag) => given.has(flag));
  if (fixed.length > 0)
    throw new UsageError(`--rdzv-backend c10d assigns what ${fixed.join(', ')} would fix: leave it out`);
  if (options.rdzvEndpoint === undefined) throw new UsageError('--rdzv-backend c10d needs --rdzv-endpoint HOST[:PORT]');
}

/** torchrun's environment for local rank `localRank`. */
export function rankEnvironment(options: LaunchOptions, localRank: number): Record<string, string> {
  return {
    RANK: String(options.nodeRank * options.nprocPerNode + localRank),
    LOCAL_RANK: String(localRank),
    GROUP_RANK: String(options.nodeRank),
    WORLD_SIZE: String(options.nnodes * options.nprocPerNode),
    LOCAL_WORLD_SIZE: String(options.nprocPerNode),
    MASTER_ADDR: options.masterAddr,
    MASTER_PORT: String(options.masterPort),
  };
}

function forwardLines(stream: NodeJS.ReadableStream, prefix: string, out: NodeJS.WritableStream): void {
  readline
    .createInterface({ input: stream, crlfDelay: Infinity })
    .on('line', (line) => out.write(`${prefix}${line}\n`));
}

/**
 * Runs the ranks, again after a failure while restarts are left (not after a signal to launch itself);
 * resolves with launch's exit code.
 */
export async function runLaunch(given: LaunchOptions): Promise<number> {
  const fixed = given.standalone ? { ...given, masterAddr: '127.0.0.1', masterPort: await freePort() } : given;
  for (let attempt = 0; ; attempt++) {
    // A dynamic rendezvous meets again at each start: a lost node leaves the others to go on without it.
    const options = given.rdzvBackend === 'c10d' ? { ...given, ...(await meetNodes(rendezvousSpec(given))) } : fixed;
    const { code, interrupted } = await runAttempt(options, attempt);
    if (code === 0 || interrupted || attempt >= options.maxRestarts) return code;
    process.stderr.write(`firebrand launch: restarting the ranks (restart ${attempt + 1} of ${options.maxRestarts})\n`);
  }
}

function rendezvousSpec(options: LaunchOptions) {
  const { host, port } = options.rdzvEndpoint as { host: string; port: number };
  return {
    host,
    port,
    id: options.rdzvId,
    minNodes: options.minNodes ?? options.nnodes,
    maxNodes: options.nnodes,
    timeoutSeconds: options.rdzvJoinTimeout,
    lastCallSeconds: options.rdzvLastCall,
  };
}

/** A rank's process, started with torchrun's environment for `attempt`, its output prefixed by its rank. */
function spawnRank(
  options: LaunchOptions,
  localRank: number,
  attempt: number,
  errorFolder: string,
): RankProcess & { child: ChildProcess } {
  const variables = rankEnvironment(options, localRank);
  const rank = Number(variables.RANK);
  const errorFile = path.join(errorFolder, `rank-${rank}.json`);
  const env = {
    ...process.env,
    ...variables,
    TORCHELASTIC_RESTART_COUNT: String(attempt),
    TORCHELASTIC_MAX_RESTARTS: String(options.maxRestarts),
    TORCHELASTIC_ERROR_FILE: errorFile,
  };
  const [command, commandArgs] = /\.(c|m)?js$/.test(options.script)
    ? [process.execPath, [options.script, ...options.args]]
    : [options.script, options.args];
  const child = spawn(command, commandArgs, { env, stdio: ['inherit', 'pipe', 'pipe'] });
  forwardLines(child.stdout as NodeJS.ReadableStream, `[rank ${rank}] `, process.stdout);
  forwardLines(child.stderr as NodeJS.ReadableStream, `[rank ${rank}] `, process.stderr);
  return { rank, child, pid: child.pid, done: false, errorFile };
}

/** One start of the ranks: the exit code, and whether launch was told to stop (SIGINT, SIGTERM). */
function runAttempt(options: LaunchOptions, attempt: number): Promise<{ code: number; interrupted: boolean }> {
  // Each rank records its failure here (torchrun's TORCHELASTIC_ERROR_FILE), for the launcher to blame the cause.
  const errorFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-launch-'));
  const children = Array.from({ length: options.nprocPerNode }, (_, localRank) =>
    spawnRank(options, localRank, attempt, errorFolder),
  );
  let firstFailure: string | undefined;
  let blamed: string | undefined;
  let interrupted = false;
  let killTimer: NodeJS.Timeout | undefined;
  const stopOthers = (signal: NodeJS.Signals) => {
    for (const entry of children) if (!entry.done) entry.child.kill(signal);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    stopOthers(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return new Promise((resolve) => {
    let running = options.nprocPerNode;
    const finish = (
      entry: (typeof children)[number],
      code: number | null,
      signal: NodeJS.Signals | null,
      error?: Error,
    ) => {
      if (entry.done) return;
      entry.done = true;
      if ((error !== undefined || code !== 0) && firstFailure === undefined) {
        firstFailure = error
          ? `rank ${entry.rank} could not start (${error.message})`
          : `rank ${entry.rank} exited with ${signal ? `signal ${signal}` : `code ${code}`}`;
        process.stderr.write(`firebrand launch: ${firstFailure} first; stopping the other ranks\n`);
        // A stopped rank (SIGSTOP, a debugger) hangs the others until they time out: it is the cause.
        const stopped = stoppedRanks(children);
        if (stopped.length > 0)
          blamed = `rank ${stopped.join(', ')} was stopped (SIGSTOP or a debugger?) and did not answer`;
        stopOthers('SIGTERM');
        killTimer = setTimeout(() => stopOthers('SIGKILL'), GRACE_SECONDS * 1000);
        killTimer.unref();
      }
      if (--running > 0) return;
      if (killTimer) clearTimeout(killTimer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (firstFailure !== undefined) {
        const cause = blamed ?? rootCause(children) ?? firstFailure;
        process.stderr.write(
          `firebrand launch: failed: ${cause}${cause === firstFailure ? '' : ` (${firstFailure} first)`}\n`,
        );
      }
      fs.rmSync(errorFolder, { recursive: true, force: true });
      resolve({ code: firstFailure === undefined ? 0 : 1, interrupted });
    };
    for (const entry of children) {
      entry.child.on('error', (error) => finish(entry, null, null, error));
      entry.child.on('exit', (code, signal) => finish(entry, code, signal));
    }
  });
}
