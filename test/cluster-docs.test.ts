// docs/guides/clusters.md runs as written: its torchrun commands (with the
// Python here; skipped, saying why, where torch cannot make torchrun's stores),
// its Kubeflow PyTorchJob (each pod's `command` with the PET_ variables the
// training operator sets) and its Slurm batch script (each task of `srun` with
// the SLURM_ variables srun sets), all on 127.0.0.1, with `train.js` standing
// for test/support/distributed-child.js. Every rank must train in one run.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { freePort } from './support/helpers';

const root = path.join(__dirname, '..', '..');
const page = fs.readFileSync(path.join(root, 'docs', 'guides', 'clusters.md'), 'utf8');
const cli = path.join(__dirname, '..', 'src', 'cli', 'main.js');
const child = path.join(__dirname, 'support', 'distributed-child.js');

/** The page's code blocks of `language`. */
function blocks(language: string): string[] {
  return [...page.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]);
}

interface Outcome {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = spawn(command, args, { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    started.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    started.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killer = setTimeout(() => started.kill('SIGKILL'), 100_000);
    started.on('close', (status) => {
      clearTimeout(killer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Each rank's report line (the child prints `{"rank": ...}`, launchers may prefix it). */
function ranksOf(outcomes: Outcome[]): { rank: number; worldSize?: number; error?: unknown }[] {
  return outcomes
    .flatMap((outcome) => outcome.stdout.split('\n'))
    .map((line) => /\{"rank".*$/.exec(line)?.[0])
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line) as { rank: number; worldSize?: number; error?: unknown })
    .sort((a, b) => a.rank - b.rank);
}

function expectOneRun(outcomes: Outcome[], worldSize: number): void {
  for (const outcome of outcomes) expect(outcome.status, outcome.stderr.slice(-2000)).to.equal(0);
  const ranks = ranksOf(outcomes);
  expect(ranks.map((report) => report.rank)).to.deep.equal(Array.from({ length: worldSize }, (_, i) => i));
  for (const report of ranks) {
    expect(report.error).to.equal(undefined);
    expect(report.worldSize).to.equal(worldSize);
  }
}

/** A command line's words, `node train.js` standing for the test's rank. */
function words(line: string): string[] {
  return line
    .trim()
    .split(/\s+/)
    .flatMap((word) => (word === 'train.js' ? [child, 'train'] : word === 'node' ? [process.execPath] : [word]));
}

describe('docs/guides/clusters.md, run as written', function () {
  this.timeout(240_000);

  it("starts torchrun's commands: one node (--standalone) and two nodes (static rendezvous)", async function () {
    const python = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
    const probe = spawnSync(
      python,
      [
        '-c',
        "import torch, torch.distributed.run, torch.distributed as d; d.TCPStore('127.0.0.1', 0, 1, True); print(torch.__version__)",
      ],
      { encoding: 'utf8' },
    );
    if (probe.status !== 0) {
      const why = /libuv/.test(probe.stderr)
        ? "its torch is built without libuv, which torchrun's rendezvous stores ask for"
        : `no torchrun: ${probe.stderr.trim().split('\n').at(-1)}`;
      console.log(`      skipped: ${python}: ${why}`);
      this.skip();
    }
    // As the page says: torch 1.13 on Python 3.11 needs --redirects 2 --tee 2.
    const patch = probe.stdout.startsWith('1.') ? ['--redirects', '2', '--tee', '2'] : [];
    const torchrun = (line: string) => [...['-m', 'torch.distributed.run', ...patch], ...words(line).slice(1)];
    const [single, twoNodes] = blocks('bash').filter((block) => block.startsWith('torchrun'));
    expect(single).to.contain('--standalone');
    expectOneRun([await run(python, torchrun(single))], 2);

    const port = String(await freePort());
    const onNode = (rank: number) =>
      torchrun(
        twoNodes
          .replace('--node_rank 0', `--node_rank ${rank}`)
          .replace('10.0.0.1', '127.0.0.1')
          .replace('--master_port 29500', `--master_port ${port}`),
      );
    expectOneRun(await Promise.all([run(python, onNode(0)), run(python, onNode(1))]), 4);
  });

  it("starts the Kubeflow PyTorchJob's pods as the training operator does (PET_ variables)", async () => {
    const [job] = blocks('yaml');
    const nprocPerNode = /nprocPerNode: "(\d+)"/.exec(job)?.[1] as string;
    const replicas = [...job.matchAll(/replicas: (\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    const commands = [...job.matchAll(/command: (\[.*\])/g)].map((match) => JSON.parse(match[1]) as string[]);
    expect(commands).to.have.length(2);
    const port = String(await freePort());
    const pods = commands.map((command, nodeRank) => {
      // npx firebrand launch train.js: this checkout's CLI, the test's rank for train.js.
      expect(command.slice(0, 3)).to.deep.equal(['npx', 'firebrand', 'launch']);
      const args = [
        cli,
        'launch',
        ...command.slice(3).flatMap((word) => (word === 'train.js' ? [child, 'train'] : [word])),
      ];
      return run(process.execPath, args, {
        PET_NNODES: String(replicas),
        PET_NODE_RANK: String(nodeRank),
        PET_NPROC_PER_NODE: nprocPerNode,
        PET_MASTER_ADDR: '127.0.0.1',
        PET_MASTER_PORT: port,
      });
    });
    expectOneRun(await Promise.all(pods), replicas * Number(nprocPerNode));
  });

  it("starts the Slurm batch script's tasks with the variables srun gives them", async () => {
    const script = blocks('bash').find((block) => block.includes('#SBATCH')) as string;
    const setting = (name: string) => new RegExp(`#SBATCH --${name}=(\\S+)`).exec(script)?.[1] as string;
    const [nodes, perNode] = [Number(setting('nodes')), Number(setting('ntasks-per-node'))];
    const srun = script.split('\n').find((line) => line.startsWith('srun ')) as string;
    const [command, ...args] = words(srun.slice('srun '.length));
    const port = String(await freePort());
    const tasks = Array.from({ length: nodes * perNode }, (_, task) =>
      run(command, args, {
        SLURM_JOB_NAME: setting('job-name'),
        SLURM_JOB_ID: '31337',
        SLURM_NTASKS: String(nodes * perNode),
        SLURM_PROCID: String(task),
        SLURM_LOCALID: String(task % perNode),
        SLURM_NODEID: String(Math.floor(task / perNode)),
        SLURM_NODELIST: '127.0.0.1',
        MASTER_PORT: port, // as the page advises where the job id's port may be taken
      }),
    );
    expectOneRun(await Promise.all(tasks), nodes * perNode);
  });
});
