// ZeRO stage 1 (config.distributed.zeroRedundancyOptimizer) on 2 ranks: each
// holds half the optimizer state, the weights are DDP's, and a checkpoint
// holds the whole state, so a sharded run resumes exactly.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { freePort } from './support/helpers';
import { maxAbsDifference, RankReport, reports, runLaunch } from './support/launch-runs';

async function adamwRun(sharding: 'ddp' | 'zero', outputDir: string, maxSteps: number): Promise<RankReport[]> {
  const result = runLaunch(
    await freePort(),
    ['--nproc-per-node', '2'],
    ['adamw-steps', sharding, outputDir, String(maxSteps)],
  );
  expect(result.status, result.stderr).to.equal(0);
  const ranks = reports(result.stdout);
  expect(ranks.map((rank) => rank.rank)).to.deep.equal([0, 1]);
  for (const rank of ranks) {
    expect(rank.error, JSON.stringify(rank.error)).to.equal(undefined);
    expect(rank.history?.epochs.at(-1)?.globalStep).to.equal(maxSteps);
  }
  return ranks;
}

describe('ZeRO-1: optimizer state sharded over 2 ranks (zeroRedundancyOptimizer)', function () {
  this.timeout(240_000);
  let folder: string;
  before(() => (folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-zero-'))));
  after(() => fs.rmSync(folder, { recursive: true, force: true }));

  it("halves each rank's AdamW state and trains to DDP's weights over 100 steps, resumed from a sharded checkpoint", async () => {
    const ddp = await adamwRun('ddp', path.join(folder, 'ddp'), 100);
    const halfway = await adamwRun('zero', path.join(folder, 'zero'), 50);
    // Rank 0 saved every rank's share: the checkpoint resumes the sharded run exactly.
    const resumed = await adamwRun('zero', path.join(folder, 'zero'), 100);
    for (const rank of [0, 1]) {
      expect(maxAbsDifference(resumed[rank].weights ?? {}, ddp[0].weights ?? {})).to.be.at.most(1e-6);
    }
    expect(maxAbsDifference(resumed[0].weights ?? {}, resumed[1].weights ?? {})).to.equal(0);
    // AdamW keeps 8 bytes per parameter (exp_avg, exp_avg_sq): DDP's on each rank, split between ZeRO's ranks.
    const whole = ddp[0].optimizerStateBytes ?? NaN;
    expect(ddp[1].optimizerStateBytes).to.equal(whole);
    const shares = halfway.map((rank) => rank.optimizerStateBytes ?? NaN);
    expect(shares[0] + shares[1]).to.equal(whole);
    for (const share of shares) expect(share).to.be.within(0.4 * whole, 0.6 * whole);
    expect(resumed.map((rank) => rank.optimizerStateBytes)).to.deep.equal(shares);
  });
});
