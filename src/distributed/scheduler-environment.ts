// The places cluster schedulers give their tasks, as torchrun's variables:
// Slurm's srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODELIST,
// SLURM_JOB_ID), read as PyTorch Lightning's SLURMEnvironment reads them, and
// Open MPI's mpirun (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK), which says
// nothing of where rank 0 is: MASTER_ADDR must come from the job script.
import { firebrandError } from '../errors';

/** torchrun's variables for a scheduler's task: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT. */
export type TorchrunVariables = Record<'RANK' | 'WORLD_SIZE' | 'LOCAL_RANK' | 'MASTER_ADDR' | 'MASTER_PORT', string>;

/**
 * The first host of a Slurm node list ('node[01-04,07],gpu5' -> 'node01'), as Lightning's
 * SLURMEnvironment.resolve_root_node_address takes it.
 */
export function firstSlurmNode(nodeList: string): string {
  const ranges = nodeList.replace(/\[(.*?)[,-].*?\]/g, '$1').replace(/\[(.*?)\]/g, '$1');
  return ranges.split(' ')[0].split(',')[0];
}

/** Lightning's port for a Slurm job: 15000 + the job id's last four digits (MASTER_PORT, when set, wins). */
function slurmPort(env: NodeJS.ProcessEnv): string {
  if (env.MASTER_PORT !== undefined) return env.MASTER_PORT;
  const jobId = env.SLURM_JOB_ID;
  return jobId === undefined || !/^\d+$/.test(jobId) ? '12910' : String(15000 + Number(jobId.slice(-4)));
}

function slurmVariables(env: NodeJS.ProcessEnv): TorchrunVariables | undefined {
  // An interactive allocation (salloc's shell) is no task of a job step.
  if (env.SLURM_NTASKS === undefined || ['bash', 'interactive'].includes(env.SLURM_JOB_NAME ?? '')) return undefined;
  if (env.SLURM_PROCID === undefined) return undefined;
  const nodeList = env.SLURM_NODELIST ?? env.SLURM_JOB_NODELIST;
  const masterAddr = env.MASTER_ADDR ?? (nodeList === undefined ? undefined : firstSlurmNode(nodeList));
  if (masterAddr === undefined || masterAddr === '') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `distributed: Slurm task ${env.SLURM_PROCID} of ${env.SLURM_NTASKS} (SLURM_PROCID, SLURM_NTASKS) but no SLURM_NODELIST or MASTER_ADDR says where rank 0 runs`,
    );
  }
  return {
    RANK: env.SLURM_PROCID,
    WORLD_SIZE: env.SLURM_NTASKS,
    LOCAL_RANK: env.SLURM_LOCALID ?? '0',
    MASTER_ADDR: masterAddr,
    MASTER_PORT: slurmPort(env),
  };
}

function openMpiVariables(env: NodeJS.ProcessEnv): TorchrunVariables | undefined {
  if (env.OMPI_COMM_WORLD_SIZE === undefined || env.OMPI_COMM_WORLD_RANK === undefined) return undefined;
  if (env.MASTER_ADDR === undefined || env.MASTER_ADDR === '') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `distributed: Open MPI rank ${env.OMPI_COMM_WORLD_RANK} of ${env.OMPI_COMM_WORLD_SIZE} (OMPI_COMM_WORLD_*), but MASTER_ADDR is not set: mpirun does not say where rank 0 runs; export MASTER_ADDR (and MASTER_PORT) to every rank (mpirun -x MASTER_ADDR -x MASTER_PORT)`,
    );
  }
  return {
    RANK: env.OMPI_COMM_WORLD_RANK,
    WORLD_SIZE: env.OMPI_COMM_WORLD_SIZE,
    LOCAL_RANK: env.OMPI_COMM_WORLD_LOCAL_RANK ?? '0',
    MASTER_ADDR: env.MASTER_ADDR,
    MASTER_PORT: env.MASTER_PORT ?? '29500',
  };
}

/** torchrun's variables for a Slurm or Open MPI task that torchrun did not start; undefined for none. */
export function schedulerVariables(env: NodeJS.ProcessEnv): TorchrunVariables | undefined {
  return slurmVariables(env) ?? openMpiVariables(env);
}
