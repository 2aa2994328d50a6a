// Data-parallel training on this machine: ranks are processes on 127.0.0.1
// talking Gloo. Two ranks must train exactly like one process on the global
// batch, agree on every reported number, resume together, and fail with a
// clear error (not hang) when one of them dies or stops answering.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BlobMlp, distributedTrainer, evalData, llamaData, llamaTrainer, trainData } from './support/distributed-child';
import { Dataset, Trainer } from '../src';
import { errorOf, freePort, rejectionOf } from './support/helpers';
import { firstSlurmNode } from '../src/distributed/scheduler-environment';
import { torchrunEnvironment } from '../src/distributed/torchrun-environment';
import { maskedTokens } from './support/masked-tokens';
import {
  checkpointSaved,
  killGroup,
  child,
  cli,
  latestTrainerState,
  listeningOn,
  launchArgs,
  maxAbsDifference,
  RankReport,
  reports,
  runLaunch,
  startProcess,
  torchrunPython,
} from './support/launch-runs';

/** Runs a launcher in the background; resolves with its exit code and output. */
function startLaunch(
  port: number,
  extra: string[],
  childArgs: string[] = ['train'],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return startLauncher(launchArgs(port, extra, childArgs));
}

/** `node args` in the background (a launcher's command line); resolves with its exit code and output. */
function startLauncher(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return startProcess(process.execPath, args);
}
interface RankRun {
  finished: Promise<{ status: number | null; report: RankReport | undefined }>;
  kill(): void;
}

/**
 * Starts one rank of a 2-rank run directly, with torchrun's environment or `variables` instead (a
 * scheduler's), killed after 30 s at most.
 */
function startRank(rank: number, port: number, mode: string, variables?: Record<string, string>): RankRun {
  const env = {
    ...process.env,
    ...(variables ?? {
      WORLD_SIZE: '2',
      RANK: String(rank),
      LOCAL_RANK: String(rank),
      MASTER_ADDR: '127.0.0.1',
      MASTER_PORT: String(port),
    }),
  };
  const rankProcess = spawn(process.execPath, [child, mode], { env });
  let stdout = '';
  rankProcess.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const killer = setTimeout(() => rankProcess.kill('SIGKILL'), 30_000);
  const finished = new Promise<{ status: number | null; report: RankReport | undefined }>((resolve) => {
    rankProcess.on('close', (status) => {
      clearTimeout(killer);
      const last = stdout.trim().split('\n').at(-1) ?? '';
      resolve({ status, report: last === '' ? undefined : (JSON.parse(last) as RankReport) });
    });
  });
  return { finished, kill: () => rankProcess.kill('SIGKILL') };
}

/** One process training on the global batch (2 ranks x 8 samples per micro-batch). */
async function singleProcessRun(
  module = false,
): Promise<{ history: RankReport['history']; weights: Record<string, number[]> }> {
  const trainer = distributedTrainer(16, {}, [], module ? new BlobMlp() : undefined);
  const history = await trainer.fit(trainData(), { evalData: evalData() });
  const state = await trainer.stateDict();
  const weights = Object.fromEntries(
    Object.entries(state).map(([name, tensor]) => [name, Array.from(tensor.data as Float32Array)]),
  );
  return { history: history as RankReport['history'], weights };
}

function expectSameAsSingleProcess(ranks: RankReport[], single: Awaited<ReturnType<typeof singleProcessRun>>): void {
  expect(ranks.map((rank) => rank.rank)).to.deep.equal([0, 1]);
  for (const rank of ranks) {
    expect(rank.error, JSON.stringify(rank.error)).to.equal(undefined);
    expect(rank.worldSize).to.equal(2);
    const epochs = rank.history?.epochs ?? [];
    expect(epochs.at(-1)?.globalStep).to.equal(24);
    expect(maxAbsDifference(rank.weights ?? {}, single.weights)).to.be.at.most(1e-5);
    // Losses and evaluation (51 samples, split 26/25) are global values on every rank.
    epochs.forEach((epoch, i) => {
      expect(epoch.loss).to.be.closeTo(single.history?.epochs[i].loss ?? NaN, 1e-6);
      expect(epoch.valLoss).to.be.closeTo(single.history?.epochs[i].valLoss ?? NaN, 1e-6);
    });
  }
  expect(maxAbsDifference(ranks[0].weights ?? {}, ranks[1].weights ?? {})).to.equal(0);
  // Every reported number but the wall-clock time is the same on both ranks.
  const untimed = (rank: RankReport) => rank.history?.epochs.map((epoch) => ({ ...epoch, seconds: undefined }));
  expect(untimed(ranks[0])).to.deep.equal(untimed(ranks[1]));
}

describe('distributed data parallel (2 ranks, Gloo on 127.0.0.1)', function () {
  this.timeout(120_000);
  let single: Awaited<ReturnType<typeof singleProcessRun>>;

  before(async () => {
    single = await singleProcessRun();
  });

  it('trains 2 ranks to the weights of one process on the global batch (24 SGD steps, accumulation, clipping)', async () => {
    const result = runLaunch(await freePort(), ['--nproc-per-node', '2']);
    expect(result.status, result.stderr).to.equal(0);
    expectSameAsSingleProcess(reports(result.stdout), single);
  });

  // torchrun's agent serves the store and says so (TORCHELASTIC_USE_AGENT_STORE=True): torch 1.13's static
  // rendezvous and 2.x's c10d one (--standalone) do; every rank then connects as a client.
  for (const rendezvous of ['static', 'standalone'] as const) {
    it(`trains under torchrun (${rendezvous} rendezvous) as one process`, async function () {
      const found = torchrunPython();
      if ('why' in found) {
        console.log(`      skipped: ${found.why}`);
        this.skip();
      }
      const { python } = found;
      // --redirects/--tee 2: torch 1.13's default "0" parses to None on Python 3.11 (its Std IntFlag), so
      // torchrun fails before starting anything; stderr goes to files and the console, stdout as it is.
      const torchrun = [
        ...['-m', 'torch.distributed.run', '--redirects', '2', '--tee', '2', '--nproc_per_node', '2'],
        ...(rendezvous === 'standalone' ? ['--standalone'] : ['--master_port', String(await freePort())]),
        ...['--no_python', process.execPath, child, 'train'],
      ];
      const result = spawnSync(python, torchrun, { encoding: 'utf8', timeout: 90_000 });
      expect(result.status, result.stderr).to.equal(0);
      expectSameAsSingleProcess(reports(result.stdout), single);
      if (rendezvous !== 'standalone') return;
      // A failed rank's root cause reaches torchrun's summary through TORCHELASTIC_ERROR_FILE.
      const failed = spawnSync(python, [...torchrun.slice(0, -1), 'die-at-step-5'], {
        encoding: 'utf8',
        timeout: 90_000,
      });
      expect(failed.status).to.not.equal(0);
      expect(failed.stderr).to.match(/error_file: \S+error\.json/);
      expect(failed.stderr).to.contain('distributed: the all-reduce').and.contain('on rank 0 of 2');
    });
  }

  it("trains 2 Slurm tasks (srun's SLURM_* variables, no torchrun) as one process", async () => {
    const port = await freePort();
    const slurm = (rank: number) => ({
      SLURM_NTASKS: '2',
      SLURM_PROCID: String(rank),
      SLURM_LOCALID: String(rank),
      SLURM_NODELIST: '127.0.0.1',
      SLURM_JOB_NAME: 'train',
      SLURM_JOB_ID: '4242',
      MASTER_PORT: String(port), // Lightning's rule: MASTER_PORT over the job id's 15000 + 4242
    });
    const ranks = [startRank(0, port, 'train', slurm(0)), startRank(1, port, 'train', slurm(1))];
    const finished = await Promise.all(ranks.map((rank) => rank.finished));
    expect(finished.map(({ status }) => status)).to.deep.equal([0, 0]);
    expectSameAsSingleProcess(
      finished.map(({ report }) => report as RankReport),
      single,
    );
  });

  it('trains a model written as TypeScript modules on 2 ranks to the weights of one process', async () => {
    const result = runLaunch(await freePort(), ['--nproc-per-node', '2'], ['train-module']);
    expect(result.status, result.stderr).to.equal(0);
    expectSameAsSingleProcess(reports(result.stdout), await singleProcessRun(true));
  });

  /** Checks 2 ranks' Llama runs (`mode` of distributed-child) against one process training `fit`. */
  async function expectLlamaAsOneProcess(mode: string, trainer: Trainer, data: Dataset): Promise<void> {
    const result = runLaunch(await freePort(), ['--nproc-per-node', '2'], [mode]);
    expect(result.status, result.stderr).to.equal(0);
    const ranks = reports(result.stdout);
    const history = await trainer.fit(data);
    const state = await trainer.stateDict();
    const weights = Object.fromEntries(
      Object.entries(state).map(([name, tensor]) => [name, Array.from(tensor.data as Float32Array)]),
    );
    expect(ranks.map((rank) => rank.rank)).to.deep.equal([0, 1]);
    for (const rank of ranks) {
      expect(rank.error, JSON.stringify(rank.error)).to.equal(undefined);
      expect(maxAbsDifference(rank.weights ?? {}, weights)).to.be.at.most(1e-5);
      rank.history?.epochs.forEach((epoch, i) => expect(epoch.loss).to.be.closeTo(history.epochs[i].loss, 1e-5));
    }
    expect(maxAbsDifference(ranks[0].weights ?? {}, ranks[1].weights ?? {})).to.equal(0);
  }

  it('fine-tunes a pretrained Llama on 2 ranks to the weights of one process (AdamW, 2 epochs)', async () =>
    expectLlamaAsOneProcess('train-llama', await llamaTrainer(16), llamaData()));

  it('weighs micro-batches by the targets counted on all ranks: 2 ranks x 2 equal one process x 4', async () =>
    expectLlamaAsOneProcess('train-llama-masked', await llamaTrainer(4, 2), maskedTokens([], 32)));

  it('runs across two launchers with --nnodes 2 (one rank per node) the same way', async () => {
    const port = await freePort();
    const nodes = await Promise.all([
      startLaunch(port, ['--nproc-per-node', '1', '--nnodes', '2', '--node-rank', '0']),
      startLaunch(port, ['--nproc-per-node', '1', '--nnodes', '2', '--node-rank', '1']),
    ]);
    for (const node of nodes) expect(node.status, node.stderr).to.equal(0);
    expectSameAsSingleProcess(reports(nodes[0].stdout + nodes[1].stdout), single);
  });

  it('runs across two launchers that meet at a c10d rendezvous (the same command on both) the same way', async () => {
    const node = ['--nproc-per-node', '1', '--nnodes', '2', '--rdzv-backend', 'c10d'];
    const endpoint = ['--rdzv-endpoint', `127.0.0.1:${await freePort()}`, '--rdzv-id', 'blobs'];
    const command = [cli, 'launch', ...node, ...endpoint, child, 'train'];
    const nodes = await Promise.all([startLauncher(command), startLauncher(command)]);
    for (const result of nodes) expect(result.status, result.stderr).to.equal(0);
    expectSameAsSingleProcess(reports(nodes[0].stdout + nodes[1].stdout), single);
  });

  it('goes on without a lost node under --nnodes 1:2: the node left meets alone and resumes, re-sharded', async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-elastic-'));
    try {
      const node = ['--nproc-per-node', '1', '--nnodes', '1:2', '--rdzv-backend', 'c10d', '--max-restarts', '1'];
      const port = await freePort();
      const endpoint = ['--rdzv-endpoint', `127.0.0.1:${port}`, '--rdzv-id', 'elastic'];
      const conf = ['--rdzv-conf', 'join_timeout=60,last_call_timeout=8'];
      const command = [cli, 'launch', ...node, ...endpoint, ...conf, child, 'train-elastic', outputDir];
      const staying = startLauncher(command);
      // The first node hosts the meeting; the second, started once it listens, in its own process group so
      // that it dies whole, ranks and all; it joins within the first meeting's last call (8 s), and the
      // restart's meeting waits as long for a node that never comes.
      await listeningOn(port);
      const leaving = spawn(process.execPath, command, { detached: true, stdio: 'ignore' });
      try {
        await checkpointSaved(outputDir, 5);
      } finally {
        killGroup(leaving); // after its checkpoint, or whatever went wrong: no node left behind
      }
      const result = await staying;
      expect(result.status, result.stderr).to.equal(0);
      expect(result.stderr).to.contain('restarting the ranks (restart 1 of 1)');
      // Either node may have hosted the first meeting (the one killed, under load): the report of the run
      // that finished is the one at world size 1.
      const finished = reports(result.stdout).filter((report) => report.worldSize === 1);
      expect(finished).to.have.length(1);
      expect(finished[0].error).to.equal(undefined);
      const state = latestTrainerState(outputDir);
      expect(state.worldSize).to.equal(1);
      expect(state.globalStep).to.be.greaterThan(5);
      // Resumed, not started afresh: epoch 0 ended sooner than one process's 16 steps, its first steps
      // having taken 2 ranks' batches.
      expect(state.history.epochs[0].globalStep).to.be.within(6, 15);
    } finally {
      fs.rmSync(outputDir, { recursive: true, force: true });
    }
  });

  it('resumes a 2-rank run from its checkpoint to the same weights; only rank 0 saves, logs and shows progress', async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-ddp-'));
    try {
      const first = runLaunch(await freePort(), ['--nproc-per-node', '2'], ['train', outputDir, '12']);
      expect(first.status, first.stderr).to.equal(0);
      expect(fs.readdirSync(path.join(outputDir, 'checkpoints'))).to.include('step-12');
      expect(first.stdout).to.match(/^\[rank 0\] epoch 1\/3 step \d+\/16/m);
      expect(first.stdout).to.not.match(/^\[rank 1\] epoch/m);
      const logLines = fs
        .readFileSync(path.join(outputDir, 'logs', 'version_0', 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n');
      const loggedSteps = logLines
        .map((line) => JSON.parse(line) as { step?: number; 'train/loss'?: number })
        .filter((row) => row['train/loss'] !== undefined)
        .map((row) => row.step);
      expect(logLines.filter((line) => line.includes('hyperparameters'))).to.have.length(1);
      // Rank 1 logging too would repeat every step.
      expect(loggedSteps).to.include.members([4, 8, 12]);
      expect(new Set(loggedSteps).size).to.equal(loggedSteps.length);
      const resumed = runLaunch(await freePort(), ['--nproc-per-node', '2'], ['train', outputDir]);
      expect(resumed.status, resumed.stderr).to.equal(0);
      // The resumed run logs beside the first, and rank 1 claims no folder of its own.
      expect(fs.readdirSync(path.join(outputDir, 'logs')).sort()).to.deep.equal(['version_0', 'version_1']);
      const ranks = reports(resumed.stdout);
      for (const rank of ranks) expect(maxAbsDifference(rank.weights ?? {}, single.weights)).to.be.at.most(1e-5);
      // One process cannot continue a 2-rank run's batch order.
      const error = await distributedTrainer(16, { outputDir, resumeFromCheckpoint: true })
        .fit(trainData())
        .then(
          () => undefined,
          (failure: Error) => failure,
        );
      expect(error?.message).to.contain("world size 2 (this run: 1; config.resume.worldSize: 'reshard' continues it");
    } finally {
      fs.rmSync(outputDir, { recursive: true, force: true });
    }
  });

  it("continues a 2-rank run in one process with config.resume.worldSize 'reshard', at the first batch not trained", async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-ddp-'));
    try {
      const first = runLaunch(await freePort(), ['--nproc-per-node', '2'], ['train', outputDir, '12']);
      expect(first.status, first.stderr).to.equal(0);
      const checkpoint = path.join(outputDir, 'checkpoints', 'step-12');
      const saved = JSON.parse(fs.readFileSync(path.join(checkpoint, 'trainer_state.json'), 'utf8'));
      const config = { resumeFromCheckpoint: checkpoint, resume: { worldSize: 'reshard' } };
      // With maxSteps at the checkpoint's step nothing trains: the weights are the 2-rank run's, exactly.
      const held = distributedTrainer(8, { ...config, maxSteps: 12 });
      await held.fit(trainData());
      const weights = Object.fromEntries(
        Object.entries(await held.stateDict()).map(([name, tensor]) => [name, Array.from(tensor.data as Float32Array)]),
      );
      expect(maxAbsDifference(weights, reports(first.stdout)[0].weights ?? {})).to.equal(0);
      const starts: { epoch: number; batch: number }[] = [];
      const resumed = distributedTrainer(8, config, [
        { preTrainBatch: ({ epoch, batch }) => void starts.push({ epoch, batch }) },
      ]);
      const history = await resumed.fit(trainData());
      // Both ranks had trained batchInEpoch batches each: twice that many of one process's.
      expect(saved.worldSize).to.equal(2);
      expect(starts[0]).to.deep.equal({ epoch: saved.epoch, batch: saved.batchInEpoch * 2 });
      const continued = history.epochs.slice(saved.history.epochs.length).map((epoch) => epoch.epoch);
      expect(continued).to.deep.equal(Array.from({ length: 3 - saved.epoch }, (_, i) => saved.epoch + i));
      expect(history.epochs.at(-1)?.globalStep).to.be.greaterThan(12);
      expect(Number.isFinite(history.epochs.at(-1)?.loss)).to.equal(true);
    } finally {
      fs.rmSync(outputDir, { recursive: true, force: true });
    }
  });

  it('fails every rank at start, naming where each would start, when only rank 0 sees the checkpoints', async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-ddp-'));
    try {
      const first = runLaunch(await freePort(), ['--nproc-per-node', '2'], ['train-own-volume', outputDir, '12']);
      expect(first.status, first.stderr).to.equal(0);
      const second = runLaunch(await freePort(), ['--nproc-per-node', '2'], ['train-own-volume', outputDir]);
      expect(second.status).to.not.equal(0);
      const ranks = reports(second.stdout);
      expect(ranks.map((report) => report.rank)).to.deep.equal([0, 1]);
      for (const { error } of ranks) {
        expect(error?.code).to.equal('ERR_FIREBRAND_DISTRIBUTED');
        expect(error?.message).to.match(/rank 0 resumes at step 12 \(digest \d+\); rank 1 starts afresh/);
        expect(error?.message).to.contain('Every rank must see the same checkpoints');
      }
    } finally {
      fs.rmSync(outputDir, { recursive: true, force: true });
      fs.rmSync(`${outputDir}-rank1`, { recursive: true, force: true });
    }
  });

  it('fails the other rank at once with ERR_FIREBRAND_DISTRIBUTED when one dies', async () => {
    const port = await freePort();
    const [survivor, dead] = await Promise.all([
      startRank(0, port, 'die-at-step-5').finished,
      startRank(1, port, 'die-at-step-5').finished,
    ]);
    expect(dead.status).to.equal(7);
    expect(survivor.status).to.equal(1);
    expect(survivor.report?.error?.code).to.equal('ERR_FIREBRAND_DISTRIBUTED');
    // Its first collective after the death: a group's count of the targets cross_entropy counts, before step 11.
    expect(survivor.report?.error?.message).to.match(
      /epoch 1, step 11: distributed: the all-reduce of the counted targets failed on rank 0 of 2 \(gloo/,
    );
    expect(survivor.report?.error?.message).to.contain('Another rank probably stopped or failed');
    // At once, not by its 60 s timeout (startRank kills a rank still running at 30 s: a safety net, not a timing).
    expect(survivor.report?.seconds).to.be.below(30);
  });

  it('ends the surviving rank with its error, never a signal, however often a rank dies (FIREBRAND_FAULT_REPEATS)', async () => {
    // A native thread still running at exit once aborted survivors (SIGABRT, 134) now and then: repeat.
    const repeats = Number(process.env.FIREBRAND_FAULT_REPEATS ?? 4);
    for (let run = 0; run < repeats; run++) {
      const port = await freePort();
      const [survivor] = await Promise.all([0, 1].map((rank) => startRank(rank, port, 'die-at-step-5').finished));
      expect(survivor.status, `run ${run}: the survivor's exit`).to.equal(1);
      expect(survivor.report?.error?.code).to.equal('ERR_FIREBRAND_DISTRIBUTED');
    }
  });

  it('stops the other rank at once, naming the error, when one fails but stays alive', async () => {
    const port = await freePort();
    const ranks = [startRank(0, port, 'throw-at-step-5'), startRank(1, port, 'throw-at-step-5')];
    let thrower: { status: number | null; report: RankReport | undefined } | undefined;
    void ranks[1].finished.then((finished) => (thrower = finished));
    const survivor = await ranks[0].finished;
    // Rank 1 is still alive (it lives on for 20 s after its error): rank 0 did not wait for its exit.
    expect(thrower).to.equal(undefined);
    ranks[1].kill();
    const failed = await ranks[1].finished;
    expect(failed.report?.error?.message).to.contain('the hook of rank 1 broke at step 5');
    expect(survivor.status).to.equal(1);
    expect(survivor.report?.error?.code).to.equal('ERR_FIREBRAND_DISTRIBUTED');
    expect(survivor.report?.error?.message).to.contain(
      'The first rank to fail said: rank 1: ERR_FIREBRAND_CALLBACK: callback postTrainBatch threw: the hook of rank 1 broke at step 5',
    );
  });

  it('evaluates on rank 0 alone with { distributed: false }, and says evaluate is a collective otherwise', async () => {
    const port = await freePort();
    const ranks = [startRank(0, port, 'evaluate-on-rank-0'), startRank(1, port, 'evaluate-on-rank-0')];
    const [alone] = await Promise.all(ranks.map((run) => run.finished));
    const report = alone.report as RankReport & { local?: { loss: number; accuracy: number; samples: number } };
    const single = await distributedTrainer(8, {}).evaluate(evalData());
    expect(report.local?.samples).to.equal(51);
    expect(report.local?.loss).to.equal(single.loss);
    expect(report.local?.accuracy).to.equal(single.accuracy);
    expect(report.error?.code).to.equal('ERR_FIREBRAND_DISTRIBUTED');
    expect(report.error?.message).to.contain(
      'evaluate is a collective: every rank calls it, or evaluate(data, { distributed: false })',
    );
  });

  it("gives user code torch.distributed's collectives: barrier, allReduce, allGather, broadcast, on numbers and tensors", async () => {
    const port = await freePort();
    const [first, second] = await Promise.all([0, 1].map((rank) => startRank(rank, port, 'collectives').finished));
    for (const [rank, { report }] of [first, second].entries()) {
      const got = report as unknown as Record<string, unknown>;
      expect(got.isMainProcess).to.equal(rank === 0);
      expect(got.sum).to.deep.equal([1, 10]);
      expect(got.mean).to.deep.equal([0.5]);
      expect(got.max).to.deep.equal({ data: [1, 1.5], shape: [2] });
      expect(got.min).to.deep.equal([0]);
      expect(got.gathered).to.deep.equal([[0], [3]]);
      expect(got.broadcast).to.deep.equal({ data: [1, 1.5], shape: [2] });
      expect(got.uneven).to.contain(
        'allGather: every rank must give as many values; the ranks gave 1 (rank 0), 2 (rank 1)',
      );
      // Inside a training step the trainer's thread is busy: refused, not deadlocked.
      expect(got.inStep).to.deep.equal([
        'cannot start sumOverRanks: this trainer is already running fit; await it before starting another',
      ]);
    }
  });

  it('fails the other rank within the timeout when one stops answering', async () => {
    const port = await freePort();
    const ranks = [startRank(0, port, 'hang-at-step-5'), startRank(1, port, 'hang-at-step-5')];
    const survivor = await ranks[0].finished;
    ranks[1].kill();
    await ranks[1].finished;
    expect(survivor.status).to.equal(1);
    expect(survivor.report?.error?.code).to.equal('ERR_FIREBRAND_DISTRIBUTED');
    expect(survivor.report?.error?.message).to.contain('timeout 3 s');
    expect(survivor.report?.seconds).to.be.within(2.5, 8);
  });

  it('makes the launcher exit non-zero naming the rank that failed first', async () => {
    const result = runLaunch(await freePort(), ['--nproc-per-node', '2'], ['die-at-step-5']);
    expect(result.status).to.equal(1);
    expect(result.stderr).to.contain('firebrand launch: failed: rank 1 exited with code 7');
  });

  it('makes the launcher blame the rank whose own error came first, not the rank it failed', async () => {
    const result = runLaunch(await freePort(), ['--nproc-per-node', '2'], ['throw-at-step-5']);
    expect(result.status).to.equal(1);
    expect(result.stderr).to.contain(
      'firebrand launch: failed: rank 1 failed first: ERR_FIREBRAND_CALLBACK: callback postTrainBatch threw: the hook of rank 1 broke at step 5 (rank 0 exited with code 1 first)',
    );
  });

  it('makes the launcher blame a rank stopped by SIGSTOP, not the rank that timed out waiting for it', async () => {
    const result = runLaunch(await freePort(), ['--nproc-per-node', '2'], ['stop-at-step-5']);
    expect(result.status).to.equal(1);
    expect(result.stderr).to.contain(
      'firebrand launch: failed: rank 1 was stopped (SIGSTOP or a debugger?) and did not answer (rank 0 exited with code 1 first)',
    );
  });

  it('fails a rank whose peers never come within the timeout, naming them and the rendezvous', async () => {
    const port = await freePort();
    const lone = await startRank(0, port, 'hang-at-step-5').finished;
    expect(lone.report?.error?.code).to.equal('ERR_FIREBRAND_DISTRIBUTED');
    expect(lone.report?.error?.message).to.match(
      new RegExp(
        `rank 1 of 2 never came to the rendezvous at 127.0.0.1:${port} \\(rank 0 of 2, waited [\\d.]+ s of a timeout of 3 s\\)`,
      ),
    );
  });

  it('fails every rank, saying so, when the ranks disagree on WORLD_SIZE', async () => {
    const port = await freePort();
    const variables = (rank: number, worldSize: number) => ({
      WORLD_SIZE: String(worldSize),
      RANK: String(rank),
      LOCAL_RANK: String(rank),
      MASTER_ADDR: '127.0.0.1',
      MASTER_PORT: String(port),
    });
    const [first, second] = await Promise.all([
      startRank(0, port, 'hang-at-step-5', variables(0, 2)).finished,
      startRank(1, port, 'hang-at-step-5', variables(1, 3)).finished,
    ]);
    expect(first.report?.error?.code).to.equal('ERR_FIREBRAND_DISTRIBUTED');
    expect(first.report?.error?.message).to.contain('rank 1 says WORLD_SIZE=3, rank 0 (this one) says 2');
    expect(second.report?.error?.message).to.contain('rank 0 says WORLD_SIZE=2, rank 1 (this one) says 3');
  });

  it('refuses a second process started with the same RANK, while the run goes on', async () => {
    const port = await freePort();
    // A run that lasts (0.25 s a step), so that the second RANK=1 reaches the store while rank 0 serves it (a
    // late one would find rank 0 gone: a finished run, not a duplicate).
    const runs = await Promise.all([0, 1, 1].map((rank) => startRank(rank, port, 'train-slowly').finished));
    const refused = runs.filter((run) => run.report?.error !== undefined);
    expect(refused.map((run) => run.report?.rank)).to.deep.equal([1]);
    expect(refused[0].report?.error?.message).to.contain(
      `another process already joined the rendezvous at 127.0.0.1:${port} as rank 1 of 2`,
    );
    expect(runs.filter((run) => run.report?.weights !== undefined)).to.have.length(2);
  });
});

describe('collectives in one process', () => {
  it("are the process's own values, and refuse what is no numbers", async () => {
    const { ranks } = distributedTrainer(8, {});
    expect(ranks.isMainProcess).to.equal(true);
    await ranks.barrier();
    expect(await ranks.allReduce([1, 2], 'max')).to.deep.equal([1, 2]);
    expect(await ranks.allGather([3])).to.deep.equal([[3]]);
    const tensor = { data: Float64Array.from([1.5]), shape: [1] };
    expect(await ranks.broadcast(tensor)).to.equal(tensor);
    expect((await rejectionOf(ranks.allReduce(['1'] as never))).message).to.equal(
      'allReduce: expected numbers, or { data: Float32Array | Float64Array, shape }',
    );
  });
});

describe("a scheduler's tasks as torchrun's ranks (Slurm as Lightning reads it, Open MPI)", () => {
  it("reads srun's variables: rank, world size, local rank, the node list's first host, the job id's port", () => {
    const place = torchrunEnvironment({
      SLURM_NTASKS: '8',
      SLURM_PROCID: '5',
      SLURM_LOCALID: '1',
      SLURM_NODELIST: 'gpu[03-06,09],cpu1',
      SLURM_JOB_NAME: 'train',
      SLURM_JOB_ID: '1234567',
    });
    expect(place).to.deep.include({ rank: 5, worldSize: 8, localRank: 1, masterAddr: 'gpu03', masterPort: 19567 });
    expect(firstSlurmNode('node[7]')).to.equal('node7');
    expect(firstSlurmNode('a1,a2')).to.equal('a1');
    // torchrun's own variables win; an interactive allocation's shell is no task.
    expect(torchrunEnvironment({ SLURM_NTASKS: '2', SLURM_PROCID: '0', SLURM_JOB_NAME: 'bash' })).to.equal(undefined);
    expect(
      torchrunEnvironment({
        SLURM_NTASKS: '2',
        SLURM_PROCID: '1',
        WORLD_SIZE: '4',
        RANK: '3',
        MASTER_ADDR: 'h',
        MASTER_PORT: '5',
      }),
    ).to.deep.include({ rank: 3, worldSize: 4 });
  });

  it("reads mpirun's variables, and refuses them without MASTER_ADDR, saying why", () => {
    const mpi = { OMPI_COMM_WORLD_SIZE: '2', OMPI_COMM_WORLD_RANK: '1', OMPI_COMM_WORLD_LOCAL_RANK: '1' };
    expect(torchrunEnvironment({ ...mpi, MASTER_ADDR: '10.0.0.1' })).to.deep.include({
      rank: 1,
      worldSize: 2,
      masterAddr: '10.0.0.1',
      masterPort: 29500,
    });
    expect(errorOf(() => torchrunEnvironment(mpi)).message).to.contain('mpirun does not say where rank 0 runs');
    expect(
      errorOf(() => torchrunEnvironment({ SLURM_NTASKS: '2', SLURM_PROCID: '0', SLURM_JOB_NAME: 'x' })).message,
    ).to.contain('no SLURM_NODELIST or MASTER_ADDR');
  });
});
