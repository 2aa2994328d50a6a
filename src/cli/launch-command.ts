// `firebrand launch`: torchrun for Node scripts. Starts --nproc-per-node
// processes with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, GROUP_RANK), prefixes their
// output with their rank, and when one fails stops the others and exits
// non-zero naming the rank that failed first.
import { ChildProcess, spawn } from 'node:child_process';
import readline from 'node:readline';

import { UsageError } from './usage-error';

export const LAUNCH_USAGE = `Usage: firebrand launch --nproc-per-node N [--nnodes M --node-rank R --master-addr HOST --master-port P] script.js [args]

Starts N processes of script.js on this node, each with torchrun's environment variables, and forwards
their output prefixed by [rank R]. If one exits with an error, the others are stopped and launch exits
non-zero, naming the rank that failed first. Multi-node: run launch on every node with the same
--nnodes, --master-addr and --master-port, and each node's --node-rank.`;

export interface LaunchOptions {
  nprocPerNode: number;
  nnodes: number;
  nodeRank: number;
  masterAddr: string;
  masterPort: number;
  script: string;
  args: string[];
}

/** Seconds the other ranks get to exit after SIGTERM before SIGKILL. */
const GRACE_SECONDS = 5;

function integerOption(name: string, text: string | undefined, min: number): number {
  const value = Number(text);
  if (text === undefined || !Number.isInteger(value) || value < min)
    throw new UsageError(`${name}: expected an integer >= ${min}, got ${text ?? 'nothing'}`);
  return value;
}

/** Parses launch's arguments; undefined means --help. */
export function parseLaunchArguments(args: string[]): LaunchOptions | undefined {
  const options: Partial<LaunchOptions> = { nnodes: 1, nodeRank: 0, masterAddr: '127.0.0.1', masterPort: 29500 };
  let i = 0;
  for (; i < args.length && args[i].startsWith('-'); i++) {
    const [flag, inline] = args[i].split('=', 2);
    const value = () => inline ?? args[++i];
    switch (flag) {
      case '--help':
      case '-h':
        return undefined;
      case '--nproc-per-node':
      case '--nproc_per_node':
        options.nprocPerNode = integerOption('--nproc-per-node', value(), 1);
        break;
      case '--nnodes':
        options.nnodes = integerOption('--nnodes', value(), 1);
        break;
      case '--node-rank':
      case '--node_rank':
        options.nodeRank = integerOption('--node-rank', value(), 0);
        break;
      case '--master-addr':
      case '--master_addr':
        options.masterAddr = value();
        if (!options.masterAddr) throw new UsageError('--master-addr: expected a host name or address');
        break;
      case '--master-port':
      case '--master_port':
        options.masterPort = integerOption('--master-port', value(), 1);
        break;
      default:
        throw new UsageError(`launch: unknown option ${flag}`);
    }
  }
  if (options.nprocPerNode === undefined) throw new UsageError('launch: --nproc-per-node is required');
  if ((options.nodeRank as number) >= (options.nnodes as number)) {
    throw new UsageError(`--node-rank ${options.nodeRank} must be below --nnodes ${options.nnodes}`);
  }
  if (i >= args.length) throw new UsageError('launch: give the script to run');
  return { ...(options as LaunchOptions), script: args[i], args: args.slice(i + 1) };
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

/** Runs the ranks; resolves with launch's exit code. */
export function runLaunch(options: LaunchOptions): Promise<number> {
  const isNodeScript = /\.(c|m)?js$/.test(options.script);
  const children: { rank: number; child: ChildProcess; done: boolean }[] = [];
  let firstFailure: string | undefined;
  return new Promise((resolve) => {
    let running = options.nprocPerNode;
    const stopOthers = (signal: NodeJS.Signals) => {
      for (const entry of children) if (!entry.done) entry.child.kill(signal);
    };
    const onSignal = (signal: NodeJS.Signals) => stopOthers(signal);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let killTimer: NodeJS.Timeout | undefined;
    for (let localRank = 0; localRank < options.nprocPerNode; localRank++) {
      const env = { ...process.env, ...rankEnvironment(options, localRank) };
      const rank = Number(env.RANK);
      const [command, commandArgs] = isNodeScript
        ? [process.execPath, [options.script, ...options.args]]
        : [options.script, options.args];
      const child = spawn(command, commandArgs, { env, stdio: ['inherit', 'pipe', 'pipe'] });
      const entry = { rank, child, done: false };
      children.push(entry);
      forwardLines(child.stdout as NodeJS.ReadableStream, `[rank ${rank}] `, process.stdout);
      forwardLines(child.stderr as NodeJS.ReadableStream, `[rank ${rank}] `, process.stderr);
      const finish = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
        if (entry.done) return;
        entry.done = true;
        const failed = error !== undefined || code !== 0;
        if (failed && firstFailure === undefined) {
          firstFailure = error
            ? `rank ${rank} could not start (${error.message})`
            : `rank ${rank} exited with ${signal ? `signal ${signal}` : `code ${code}`}`;
          process.stderr.write(`firebrand launch: ${firstFailure} first; stopping the other ranks\n`);
          stopOthers('SIGTERM');
          killTimer = setTimeout(() => stopOthers('SIGKILL'), GRACE_SECONDS * 1000);
          killTimer.unref();
        }
        if (--running === 0) {
          if (killTimer) clearTimeout(killTimer);
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          if (firstFailure !== undefined) process.stderr.write(`firebrand launch: failed: ${firstFailure}\n`);
          resolve(firstFailure === undefined ? 0 : 1);
        }
      };
      child.on('error', (error) => finish(null, null, error));
      child.on('exit', (code, signal) => finish(code, signal));
    }
  });
}
