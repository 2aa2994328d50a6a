// PyTorch's own elastic launcher: two torchrun agents meet at a c10d
// rendezvous with --nnodes 1:2; when one node dies whole, the agent left
// restarts its rank (--max_restarts), meets alone, and the rank resumes from
// the last checkpoint at world size 1 (config.resume.worldSize 'reshard').
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { freePort } from './support/helpers';
import {
  checkpointSaved,
  killGroup,
  listeningOn,
  child,
  latestTrainerState,
  reports,
  startProcess,
  torchrunPython,
} from './support/launch-runs';

describe("torchrun's elastic agents (--nnodes 1:2, c10d rendezvous)", function () {
  this.timeout(180_000);

  it('go on without a lost node: the agent left restarts its rank, which resumes alone, re-sharded', async function () {
    const found = torchrunPython();
    if ('why' in found) {
      console.log(`      skipped: ${found.why}`);
      this.skip();
    }
    const { python } = found;
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-torchrun-elastic-'));
    try {
      // --redirects/--tee 2: torch 1.13's default "0" parses to None on Python 3.11 (see distributed.test.ts).
      const port = await freePort();
      const torchrun = [
        ...['-m', 'torch.distributed.run', '--redirects', '2', '--tee', '2', '--nproc_per_node', '1'],
        ...['--nnodes', '1:2', '--max_restarts', '1', '--rdzv_backend', 'c10d', '--rdzv_id', 'elastic'],
        ...['--rdzv_endpoint', `127.0.0.1:${port}`, '--rdzv_conf', 'join_timeout=60,last_call_timeout=8'],
        ...['--no_python', process.execPath, child, 'train-elastic', outputDir],
      ];
      // The first agent hosts the rendezvous store (the second starts once it listens, and fails to bind,
      // so it joins as a client); the second, in its own process group so that it dies whole (agent and
      // rank), joins within the first meeting's last call.
      const staying = startProcess(python, torchrun);
      await listeningOn(port);
      const leaving = spawn(python, torchrun, { detached: true, stdio: 'ignore' });
      try {
        await checkpointSaved(outputDir, 5);
      } finally {
        killGroup(leaving); // after its checkpoint, or whatever went wrong: no node left behind
      }
      const result = await staying;
      expect(result.status, result.stderr).to.equal(0);
      const finished = reports(result.stdout).filter((report) => report.worldSize === 1);
      expect(finished, result.stdout).to.have.length(1);
      expect(finished[0].error).to.equal(undefined);
      const state = latestTrainerState(outputDir);
      expect(state.worldSize).to.equal(1);
      // Resumed, not started afresh: epoch 0 ended sooner than one process's 16 steps.
      expect(state.history.epochs[0].globalStep).to.be.within(6, 15);
    } finally {
      fs.rmSync(outputDir, { recursive: true, force: true });
    }
  });
});
