// The console progress: a bar redrawn in place on a TTY, plain lines otherwise.
import { expect } from 'chai';

import { ProgressBar } from '../src';
import { blobDataset, blobTrainer } from './helpers';

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
    expect(stream.text).to.match(/\r\x1b\[2Kepoch 1\/2 \[[=> ]{24}\] \d+\/8  loss \d+\.\d{4}  \d+\.\d steps\/s  eta \d+s/);
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
});
