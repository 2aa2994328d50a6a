// Stopping a fit from outside: AbortSignal, SIGINT/SIGTERM (graceful, then
// at once), and failures reported through onException with the hook named.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { blobDataset, blobTrainer, rejectionOf } from './support/helpers';

/** Runs the interrupt child, calling `onLine` for each JSON line it prints. */
function runChild(args: string[], onLine: (line: Record<string, unknown>, child: ReturnType<typeof spawn>) => void) {
  return new Promise<{ code: number | null; lines: Record<string, unknown>[] }>((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'support', 'interrupt-child.js'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const complete = buffered.split('\n');
      buffered = complete.pop() ?? '';
      for (const text of complete) {
        const line = JSON.parse(text) as Record<string, unknown>;
        lines.push(line);
        onLine(line, child);
      }
    });
    child.on('close', (code) => resolve({ code, lines }));
  });
}

describe('interrupting fit', function () {
  this.timeout(60_000);

  it('stops at the next step when its AbortSignal aborts, and resolves with the history so far', async () => {
    const controller = new AbortController();
    const trainer = blobTrainer(
      { numEpochs: 100, batchSize: 8, logEvery: 1 },
      {
        callbacks: [
          {
            onLog: (logs) => {
              if (logs.globalStep === 5) controller.abort();
            },
          },
        ],
      },
    );
    const history = await trainer.fit(blobDataset(64), { signal: controller.signal });
    expect(history.stopped).to.equal(true);
    expect(trainer.globalStep).to.be.within(5, 20);
    const aborted = new AbortController();
    aborted.abort();
    const idle = blobTrainer({ numEpochs: 100 });
    const none = await idle.fit(blobDataset(64), { signal: aborted.signal });
    expect(none).to.deep.include({ epochs: [], evaluations: [], stopped: true, samplesPerSecond: 0 });
    expect(idle.globalStep).to.equal(0);
  });

  it('on SIGINT saves an interrupted checkpoint and resolves; a second SIGINT exits at once', async () => {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-sigint-'));
    const graceful = await runChild([outputDir], (line, child) => {
      if (line.step === 6) child.kill('SIGINT');
    });
    expect(graceful.code).to.equal(0);
    expect(graceful.lines[graceful.lines.length - 1]).to.deep.include({ history: { stopped: true, epochs: 1 } });
    const latest = fs.readFileSync(path.join(outputDir, 'checkpoints', 'latest'), 'utf8').trim();
    const state = JSON.parse(
      fs.readFileSync(path.join(outputDir, 'checkpoints', latest, 'trainer_state.json'), 'utf8'),
    );
    expect(state.interrupted).to.equal(true);

    const started = Date.now();
    const forced = await runChild([outputDir, 'slow'], (line, child) => {
      if (line.step !== undefined && (line.step as number) >= 3 && !child.killed) child.kill('SIGINT');
      if (line.stopping) process.kill(child.pid as number, 'SIGINT');
    });
    expect(forced.code).to.equal(130);
    expect(Date.now() - started, 'it did not wait for the 20 s hook').to.be.below(15_000);
    fs.rmSync(outputDir, { recursive: true });
  });

  it('runs onException, then rejects naming the hook that threw; the trainer stays usable', async () => {
    const seen: unknown[] = [];
    const trainer = blobTrainer(
      { numEpochs: 2 },
      {
        callbacks: [
          {
            onEpochEnd: () => {
              throw new Error('disk full');
            },
            onException: (error) => void seen.push(error),
          },
        ],
      },
    );
    const error = await rejectionOf(trainer.fit(blobDataset(64)));
    expect(error.message).to.equal('callback onEpochEnd threw: disk full');
    expect(seen).to.deep.equal([error]);
    expect(await trainer.fit(blobDataset(64), { numEpochs: 1 }).catch((e: Error) => e.message)).to.equal(
      'callback onEpochEnd threw: disk full',
    );
    expect((await trainer.evaluate(blobDataset(32))).samples).to.equal(32);
  });
});
