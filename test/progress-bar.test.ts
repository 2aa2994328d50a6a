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
  it('redraws one bar per epoch on a TTY, with loss and steps/s', async () => {
    const stream = new MemoryStream(true);
    await trainWith(stream);
    const lines = stream.text.split('\n').filter(Boolean);
    expect(lines).to.have.length(2);
    expect(stream.text).to.match(/\r\x1b\[2Kepoch 1\/2 \[[=> ]{24}\] \d+\/8  loss \d+\.\d{4}  \d+\.\d steps\/s  eta \d+s/);
    expect(lines[1]).to.match(/epoch 2\/2 done in \d+s  loss \d\.\d{4}  accuracy \d\.\d{4}  val_loss \d\.\d{4}  val_accuracy \d\.\d{4}$/);
  });

  it('writes plain lines every logEvery steps when stdout is not a TTY', async () => {
    const stream = new MemoryStream(false);
    await trainWith(stream);
    expect(stream.text).to.not.contain('\r');
    const lines = stream.text.trimEnd().split('\n');
    expect(lines).to.have.length(6); // steps 4 and 8, then the summary, for each of 2 epochs
    expect(lines[0]).to.match(/^epoch 1\/2 step 4\/8  loss \d\.\d{4}  lr 1\.00e-1  \d+\.\d steps\/s$/);
    expect(lines[2]).to.match(/^epoch 1\/2 done in \d+s  loss/);
  });
});
