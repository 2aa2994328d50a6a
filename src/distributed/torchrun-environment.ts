// Where this process stands in a data-parallel run, read from the environment
// torchrun (and `firebrand launch`, and torchrun-compatible tools) set.
import { firebrandError } from '../errors';
import { schedulerVariables } from './scheduler-environment';

export interface DistributedPlace {
  /** RANK: this process among all, 0 .. worldSize-1. */
  rank: number;
  /** WORLD_SIZE: processes in the run. */
  worldSize: number;
  /** LOCAL_RANK: this process among those of its node (its GPU index). */
  localRank: number;
  /** MASTER_ADDR, MASTER_PORT: where rank 0 serves the rendezvous store. */
  masterAddr: string;
  masterPort: number;
  /**
   * Where torchrun's agent already serves the store at MASTER_ADDR:MASTER_PORT
   * (TORCHELASTIC_USE_AGENT_STORE=True): every rank connects as a client, its keys under
   * '/worker/attempt_<TORCHELASTIC_RESTART_COUNT>', as torch.distributed's rendezvous does; else ''.
   */
  agentStorePrefix: string;
}

function integerVariable(env: NodeJS.ProcessEnv, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const text = env[name];
  const value = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `distributed: environment variable ${name} must be an integer in [${min}, ${max}], got ${text === undefined ? 'nothing' : `'${text}'`} ` +
        '(start the script with `firebrand launch` or torchrun, which set it)',
    );
  }
  return value;
}

/**
 * The run this process belongs to, or undefined when it runs alone (WORLD_SIZE unset or 1): torchrun's
 * variables, else a Slurm or Open MPI task's (scheduler-environment.ts).
 */
export function torchrunEnvironment(given: NodeJS.ProcessEnv = process.env): DistributedPlace | undefined {
  const scheduled = given.WORLD_SIZE === undefined ? schedulerVariables(given) : undefined;
  const env = scheduled === undefined ? given : { ...given, ...scheduled };
  if (env.WORLD_SIZE === undefined) return undefined;
  const worldSize = integerVariable(env, 'WORLD_SIZE', 1);
  if (worldSize === 1) return undefined;
  const masterAddr = env.MASTER_ADDR;
  if (masterAddr === undefined || masterAddr === '') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'distributed: WORLD_SIZE is set but MASTER_ADDR is not (start the script with `firebrand launch` or torchrun, which set it)',
    );
  }
  return {
    rank: integerVariable(env, 'RANK', 0, worldSize - 1),
    worldSize,
    localRank: env.LOCAL_RANK === undefined ? 0 : integerVariable(env, 'LOCAL_RANK', 0),
    masterAddr,
    masterPort: integerVariable(env, 'MASTER_PORT', 1, 65535),
    agentStorePrefix:
      env.TORCHELASTIC_USE_AGENT_STORE === 'True'
        ? `/worker/attempt_${env.TORCHELASTIC_RESTART_COUNT === undefined ? 0 : integerVariable(env, 'TORCHELASTIC_RESTART_COUNT', 0)}`
        : '',
  };
}

/** The device a rank trains on: with CUDA, its node's GPU LOCAL_RANK ('cuda' and 'auto' pick it). */
export function deviceForRank(device: string, place: DistributedPlace, cudaAvailable: boolean): string {
  if (device === 'cuda' || (device === 'auto' && cudaAvailable)) return `cuda:${place.localRank}`;
  return device;
}
