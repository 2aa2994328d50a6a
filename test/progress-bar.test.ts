// The console progress: a bar redrawn in place on a TTY, plain lines otherwise.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { EarlyStopping, ProgressBar } from '../src';
import { blobDataset, blobTrainer } from './support/helpers';

class MemoryStream {
  text = '';
  constructor(readonly isTTY: boolean) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

async function trainWith(stream: MemoryStream): Promise<void> {
  const trainer = blobTrainer({ numEpochs: 2, logEvery: 4 }, { callbacks: [new ProgressBar(stream)] });
  await trainer.fit(blobDataset(128), { evalData: blobDataset(32, 4, 9) });
}

describe('progress output', () => {
  it('redraws a training bar and an evaluation bar on a TTY, then prints summaries', async () => {
    const stream = new MemoryStream(true);
    await trainWith(stream);
    const lines = stream.text.split('\n').filter(Boolean);
    // Per epoch: the validation line and the epoch summary (bars are redrawn, not new lines).
    expect(lines).to.have.length(4);
    expect(stream.text).to.match(
      /\r\x1b\[2Kepoch 1\/2 \[[=> ]{24}\] \d+\/8  loss \d+\.\d{4}  eta \d+s  \d+\.\d steps\/s/,
    );
    expect(stream.text).to.match(/\r\x1b\[2K  validating \[={24}\] 2\/2  eta 0s  \d+\.\d batches\/s/);
    expect(lines[2]).to.match(/\r\x1b\[2K  validation at step 16:  valLoss \d\.\d{4}  valAccuracy \d\.\d{4}$/);
    expect(lines[3]).to.match(/epoch 2\/2 done in \d+s  loss \d\.\d{4}  accuracy \d\.\d{4}$/);
  });

  it('writes plain lines every logEvery steps when stdout is not a TTY', async () => {
    const stream = new MemoryStream(false);
    await trainWith(stream);
    expect(stream.text).to.not.contain('\r');
    const lines = stream.text.trimEnd().split('\n');
    expect(lines).to.have.length(8); // steps 4 and 8, the validation and the summary, for each of 2 epochs
    expect(lines[0]).to.match(/^epoch 1\/2 step 4\/8  loss \d\.\d{4}  lr 1\.00e-1  \d+\.\d steps\/s$/);
    expect(lines[2]).to.match(/^  validation at step 8:  valLoss \d\.\d{4}  valAccuracy \d\.\d{4}$/);
    expect(lines[3]).to.match(/^epoch 1\/2 done in \d+s  loss/);
  });

  for (const columns of [40, 60, 80, 120]) {
    it(`fits a ${columns}-column terminal: every redraw stays on its line (pseudo-terminal)`, () => {
      // script(1) runs the child on a pseudo-terminal of that width; Node reads it as stdout.columns.
      const child = path.join(__dirname, 'support', 'progress-child.js');
      const result = spawnSync(
        'script',
        ['-qec', `stty cols ${columns} rows 24; "${process.execPath}" "${child}"`, '/dev/null'],
        {
          encoding: 'utf8',
        },
      );
      expect(result.status, result.stderr).to.equal(0);
      const segments = result.stdout
        .split(/[\r\n]+/)
        .map((segment) => segment.replace(/\x1b\[2K/g, ''))
        .filter(Boolean);
      const bars = segments.filter((segment) => segment.startsWith('epoch 1/3 ') && segment.includes('/16'));
      expect(bars.length, result.stdout).to.be.at.least(2);
      // Redrawn lines (bars) must fit; summary lines end with a newline and may wrap.
      const redrawn = segments.filter((segment) => /\[[=> ]+\]/.test(segment));
      expect(redrawn.length).to.be.at.least(bars.length);
      for (const segment of redrawn) expect(segment.length, `'${segment}'`).to.be.below(columns);
      if (columns >= 40) expect(bars[0]).to.match(/^epoch 1\/3 \[[=> ]+\] 4\/16  loss \d\.\d{4}/);
      if (columns === 120) expect(bars[0]).to.contain('lr pg0 1.00e-3 pg1 1.00e-1');
      expect(segments).to.include('stopped: maxSteps: 20 optimizer steps reached');
    });
  }

  it("shows every parameter group's learning rate by name in plain lines", async () => {
    const stream = new MemoryStream(false);
    const trainer = blobTrainer(
      { numEpochs: 1, logEvery: 4 },
      {
        callbacks: [new ProgressBar(stream)],
        optimizer: { name: 'sgd', lr: 0.1, paramGroups: [{ params: ['0.'], lr: 0.001 }] },
      },
    );
    await trainer.fit(blobDataset(64));
    expect(stream.text.split('\n')[0]).to.match(
      /^epoch 1\/1 step 4\/4  loss \d\.\d{4}  lr pg0 1\.00e-3 pg1 1\.00e-1  \d+\.\d steps\/s$/,
    );
  });

  it('says why training stopped: EarlyStopping, maxTime, maxSteps, an aborted signal, shouldStop', async () => {
    const stoppedBy = async (
      config: object,
      callbacks: object[],
      abort = false,
    ): Promise<{ reason?: string; text: string }> => {
      const stream = new MemoryStream(false);
      const controller = new AbortController();
      const abortAfterEpoch = { onEpochEnd: () => (abort ? controller.abort() : undefined) };
      const trainer = blobTrainer(
        { numEpochs: 50, ...config },
        { callbacks: [...callbacks, abortAfterEpoch, new ProgressBar(stream)] },
      );
      const history = await trainer.fit(blobDataset(64), {
        evalData: blobDataset(32, 4, 9),
        signal: controller.signal,
      });
      return { reason: history.stopReason, text: stream.text };
    };
    const early = await stoppedBy({}, [new EarlyStopping({ monitor: 'valLoss', patience: 1, minDelta: 10 })]);
    expect(early.reason).to.match(
      /^EarlyStopping: valLoss did not improve for 1 epoch \(best \d\.\d+ in history\.epochs\[0\]\)$/,
    );
    expect(early.text).to.contain(`\nstopped: ${early.reason}\n`);
    const timer = await stoppedBy({ maxTime: 0.05, numEpochs: 100000 }, []);
    expect(timer.reason).to.equal('Timer: 0.05 s of training reached');
    expect((await stoppedBy({ maxSteps: 6 }, [])).reason).to.equal('maxSteps: 6 optimizer steps reached');
    expect((await stoppedBy({}, [], true)).reason).to.equal("fit's signal was aborted");
    const flagged = await stoppedBy({}, [
      {
        postTrainBatch: (_info: unknown, trainer: { shouldStop: boolean }) => {
          trainer.shouldStop = true;
        },
      },
    ]);
    expect(flagged.reason).to.equal('trainer.shouldStop was set');
    const finished = await stoppedBy({ numEpochs: 1 }, []);
    expect(finished.reason).to.equal(undefined);
    expect(finished.text).to.not.contain('stopped:');
  });
});
