// Runs test/support/lowered-linear-child.js for test/frozen-linear.test.ts and test/linear-lowering.test.ts.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

/** The products computed in test/support/lowered-linear-child.js's predicts, and their outputs. */
export function predicts(mode: 'lowered' | 'layer-by-layer', env: NodeJS.ProcessEnv = {}) {
  const child = spawnSync(process.execPath, [path.join(__dirname, 'lowered-linear-child.js'), mode], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  expect(child.status, child.stderr).to.equal(0);
  return JSON.parse(child.stdout) as { sgemmProducts: number; matmulProducts: number; outputs: number[] };
}
