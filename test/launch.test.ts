// `firebrand launch`: torchrun's environment per rank, output prefixed by rank,
// and a failing rank stopping the others with an exit that names it.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { runtimeInfo } from '../src';
import { freePort } from '../src/cli/launch-command';
import { meetNodes } from '../src/cli/node-rendezvous';
import { listeningOn } from './support/launch-runs';

const cli = path.join(__dirname, '..', 'src', 'cli', 'main.js');
const child = path.join(__dirname, 'support', 'launch-child.js');

function launch(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [cli, 'launch', ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, ...env },
  });
}

/** launch in the background (nodes that must run at once), with its exit status and output. */
function launchAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const process_ = spawn(process.execPath, [cli, 'launch', ...args]);
    let stdout = '';
    let stderr = '';
    process_.stdout.on('data', (chunk) => (stdout += String(chunk)));
    process_.stderr.on('data', (chunk) => (stderr += String(chunk)));
    process_.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Each rank's environment as launch-child.js prints it. */
function rankEnvironments(stdout: string): Record<string, string>[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse((/^\[rank \d+\] (.*)$/.exec(line) as RegExpExecArray)[1]) as Record<string, string>);
}

describe('firebrand launch', () => {
  it("starts each rank with torchrun's environment and prefixes its output", () => {
    const result = launch([
      '--nproc-per-node',
      '2',
      '--nnodes',
      '2',
      '--node-rank',
      '1',
      '--master-port',
      '29611',
      child,
    ]);
    expect(result.status, result.stderr).to.equal(0);
    const ranks = result.stdout
      .trim()
      .split('\n')
      .map((line) => {
        const match = /^\[rank (\d)\] (.*)$/.exec(line);
        expect(match, line).to.not.equal(null);
        return { prefix: Number(match?.[1]), env: JSON.parse(match?.[2] as string) };
      })
      .sort((a, b) => a.prefix - b.prefix);
    expect(ranks.map((rank) => rank.prefix)).to.deep.equal([2, 3]);
    expect(ranks[1].env).to.deep.equal({
      RANK: '3',
      LOCAL_RANK: '1',
      GROUP_RANK: '1',
      WORLD_SIZE: '4',
      LOCAL_WORLD_SIZE: '2',
      MASTER_ADDR: '127.0.0.1',
      MASTER_PORT: '29611',
    });
    expect(result.stderr).to.contain('[rank 2] hello from 2');
  });

  it('stops the other ranks when one fails and exits non-zero naming it', () => {
    const started = Date.now();
    const result = launch(['--nproc-per-node=3', child, 'fail-rank-1']);
    expect(result.status).to.equal(1);
    expect(result.stderr).to.contain('firebrand launch: rank 1 exited with code 3 first; stopping the other ranks');
    expect(result.stderr).to.contain('firebrand launch: failed: rank 1 exited with code 3');
    expect(Date.now() - started).to.be.below(10_000);
  });

  it("takes torchrun's PET_ variables as the flags' defaults (Kubeflow's PyTorchJob), the flags winning", () => {
    const pet = { PET_NPROC_PER_NODE: '2', PET_NNODES: '2', PET_NODE_RANK: '1', PET_MASTER_PORT: '29613' };
    const ranks = (stdout: string) =>
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line.replace(/^\[rank \d\] /, '')) as Record<string, string>);
    const fromEnv = launch([child], pet);
    expect(fromEnv.status, fromEnv.stderr).to.equal(0);
    expect(
      ranks(fromEnv.stdout)
        .map((env) => env.RANK)
        .sort(),
    ).to.deep.equal(['2', '3']);
    expect(ranks(fromEnv.stdout)[0]).to.include({ WORLD_SIZE: '4', MASTER_PORT: '29613' });
    const flagged = launch(['--nproc-per-node', '1', child], pet);
    expect(ranks(flagged.stdout).map((env) => [env.RANK, env.WORLD_SIZE])).to.deep.equal([['1', '2']]);
    expect(launch([child], { ...pet, PET_NNODES: '1:3' }).stderr).to.contain(
      '--nnodes 1:3 asks for elastic membership, which needs --rdzv-backend c10d',
    );
  });

  it('counts processes per node as torchrun does for PET_NPROC_PER_NODE=auto, cpu and gpu', function () {
    const cpus = os.availableParallelism();
    if (cpus > 8 || runtimeInfo().cudaAvailable) {
      console.log(
        `      skipped: ${cpus} CPUs${runtimeInfo().cudaAvailable ? ' and CUDA' : ''} would start too many ranks here`,
      );
      this.skip();
    }
    const worldSizes = (result: { stdout: string }) =>
      result.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line.replace(/^\[rank \d+\] /, '')) as Record<string, string>).WORLD_SIZE);
    // No CUDA here: auto is one process per CPU this process may use, as torchrun's.
    const auto = launch(['--standalone', child], { PET_NPROC_PER_NODE: 'auto' });
    expect(auto.status, auto.stderr).to.equal(0);
    expect(worldSizes(auto)).to.deep.equal(new Array(cpus).fill(String(cpus)));
    expect(worldSizes(launch(['--nproc-per-node', 'cpu', '--standalone', child]))).to.have.length(cpus);
    expect(launch(['--nproc-per-node', 'gpu', child]).stderr).to.contain(
      '--nproc-per-node gpu: CUDA is not available here',
    );
  });

  it("runs one node at a free port of 127.0.0.1 with --standalone, as torchrun's", () => {
    const result = launch(['--nproc-per-node', '2', '--standalone', child]);
    expect(result.status, result.stderr).to.equal(0);
    const envs = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line.replace(/^\[rank \d\] /, '')) as Record<string, string>);
    expect(envs.map((env) => env.WORLD_SIZE)).to.deep.equal(['2', '2']);
    expect(new Set(envs.map((env) => `${env.MASTER_ADDR}:${env.MASTER_PORT}`)).size).to.equal(1);
    expect(envs[0].MASTER_ADDR).to.equal('127.0.0.1');
    expect(Number(envs[0].MASTER_PORT)).to.not.equal(29500);
    expect(launch(['--nproc-per-node', '2', '--standalone', '--nnodes', '2', child]).stderr).to.contain(
      '--standalone runs one node',
    );
  });

  it('starts the ranks again after a failure with --max-restarts, telling them the attempt', () => {
    const result = launch(['--nproc-per-node', '2', '--max-restarts', '2', child, 'fail-first-attempt']);
    expect(result.status, result.stderr).to.equal(0);
    expect(result.stderr).to.contain('firebrand launch: rank 1 exited with code 4 first');
    expect(result.stderr).to.contain('firebrand launch: restarting the ranks (restart 1 of 2)');
    expect(result.stderr).to.contain('[rank 1] attempt 1 of rank 1');
    const once = launch(['--nproc-per-node', '2', child, 'fail-first-attempt']);
    expect(once.status).to.equal(1);
    expect(once.stderr).to.not.contain('restarting');
  });

  it('ranks the nodes that meet at a c10d rendezvous, each running the same command', async function () {
    this.timeout(60_000);
    const endpoint = `127.0.0.1:${await freePort()}`;
    const node = ['--nproc-per-node', '2', '--nnodes', '2', '--rdzv-backend', 'c10d', '--rdzv-endpoint', endpoint];
    const results = await Promise.all([0, 1].map(() => launchAsync([...node, '--rdzv-id', 'job-7', child])));
    for (const result of results) expect(result.status, result.stderr).to.equal(0);
    const nodes = results.map((result) => rankEnvironments(result.stdout));
    const everyRank = nodes.flat();
    expect(everyRank.map((env) => env.RANK).sort()).to.deep.equal(['0', '1', '2', '3']);
    expect(nodes.map((ranks) => ranks[0].GROUP_RANK).sort()).to.deep.equal(['0', '1']);
    for (const ranks of nodes) {
      expect(ranks.map((env) => Number(env.RANK) - 2 * Number(env.GROUP_RANK)).sort()).to.deep.equal([0, 1]);
    }
    // One master for the whole job, which the host node's rank 0 serves.
    expect(new Set(everyRank.map((env) => `${env.MASTER_ADDR}:${env.MASTER_PORT}:${env.WORLD_SIZE}`)).size).to.equal(1);
    expect(everyRank[0].MASTER_ADDR).to.equal('127.0.0.1');
    expect(everyRank[0].WORLD_SIZE).to.equal('4');

    // A node of another job is refused; a node alone waits its join_timeout, then says how many came.
    const lonelyPort = await freePort();
    const lonelyEndpoint = `127.0.0.1:${lonelyPort}`;
    const [alone, stranger] = await Promise.all([
      launchAsync([...node.slice(0, -1), lonelyEndpoint, '--rdzv-id', 'a', '--rdzv-conf', 'join_timeout=3', child]),
      listeningOn(lonelyPort).then(() =>
        launchAsync([...node.slice(0, -1), lonelyEndpoint, '--rdzv-id', 'b', '--rdzv-conf', 'join_timeout=3', child]),
      ),
    ]);
    expect(alone.status).to.equal(2);
    expect(alone.stderr).to.contain(`rendezvous 'a' at ${lonelyEndpoint}: 1 of 2 nodes joined within 3 s`);
    expect(stranger.status).to.equal(2);
    expect(stranger.stderr).to.contain("another job's rendezvous (id 'a', not 'b')");
    expect(launch([...node, '--node-rank', '1', child]).stderr).to.contain(
      '--rdzv-backend c10d assigns what --node-rank would fix',
    );
    expect(launch(['--nproc-per-node', '1', '--rdzv-backend', 'c10d', child]).stderr).to.contain(
      'needs --rdzv-endpoint',
    );
  });

  it('does not count a node that left the c10d meeting before it ended', async () => {
    const spec = { host: '127.0.0.1', port: await freePort(), id: 'job', minNodes: 2, maxNodes: 3 };
    const timing = { timeoutSeconds: 20, lastCallSeconds: 1 };
    const hosting = meetNodes({ ...spec, ...timing });
    await listeningOn(spec.port);
    // A node that joins, then dies before the meeting ends.
    const leaving = net.connect(spec.port, spec.host, () => leaving.write('{"id":"job"}\n'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    leaving.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [host, joiner] = await Promise.all([hosting, meetNodes({ ...spec, ...timing })]);
    expect([host.nodeRank, host.nnodes, joiner.nodeRank, joiner.nnodes]).to.deep.equal([0, 2, 1, 2]);
    expect(joiner.masterPort).to.equal(host.masterPort);
  });

  it('names bad arguments', () => {
    const missing = launch([child]);
    expect(missing.status).to.equal(2);
    expect(missing.stderr).to.contain('launch: --nproc-per-node is required');
    expect(launch(['--nproc-per-node', '0', child]).stderr).to.contain(
      '--nproc-per-node: expected an integer >= 1, got 0',
    );
    expect(launch(['--nproc-per-node', '1', '--nnodes', '2', '--node-rank', '2', child]).stderr).to.contain(
      '--node-rank 2 must be below --nnodes 2',
    );
  });
});
