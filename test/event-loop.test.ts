// Training runs on a worker thread: timers in the same process keep firing.
import { expect } from 'chai';

import { Dataset, nn, Trainer } from '../src';
import { seededRandom } from './support/helpers';

describe('event loop while fit runs', () => {
  it('keeps firing a setInterval throughout training', async () => {
    const samples = 2048;
    const random = seededRandom(3);
    const data = Dataset.fromArrays({
      inputs: new Float32Array(samples * 256).map(() => random()),
      inputShape: [samples, 256],
      targets: new Int32Array(samples).map((_, i) => i % 10),
    });
    const trainer = new Trainer({
      model: nn.sequential(nn.linear(256, 512), nn.relu(), nn.linear(512, 512), nn.relu(), nn.linear(512, 10)),
      loss: 'cross_entropy',
      optimizer: 'adam',
      config: { numEpochs: 8, batchSize: 32, progressBar: false },
    });

    const intervalMs = 10;
    const tickTimes: number[] = [];
    const timer = setInterval(() => tickTimes.push(performance.now()), intervalMs);
    const started = performance.now();
    const history = await trainer.fit(data);
    const elapsed = performance.now() - started;
    clearInterval(timer);

    const gaps = tickTimes.slice(1).map((time, i) => time - tickTimes[i]);
    const longestGap = Math.max(...gaps);
    console.log(
      `      fit took ${elapsed.toFixed(0)} ms, ${tickTimes.length} ticks, longest gap ${longestGap.toFixed(1)} ms`,
    );
    expect(history.epochs).to.have.length(8);
    expect(elapsed).to.be.above(300, 'training should last long enough to measure the event loop');
    expect(tickTimes.length).to.be.at.least(Math.floor((elapsed / intervalMs) * 0.5));
    expect(longestGap).to.be.below(250);
  });
});
