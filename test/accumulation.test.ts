// Gradient accumulation equals one batch of the same samples when a loss counts
// its targets: cross_entropy with ignored targets (-100, as chat SFT masks its
// prompts) and class weights divides each micro-batch's sum by the group's
// count, as transformers' Trainer does with num_items_in_batch, not by its own.
import { expect } from 'chai';
import path from 'node:path';

import { Dataset, fromPretrained, NumericArray, TensorData, Trainer, TrainerOptions } from '../src';
import { blobDataset, blobTrainer } from './support/helpers';
import { maskedTokens } from './support/masked-tokens';

const llamaFolder = path.join(__dirname, '..', '..', 'test', 'fixtures', 'pretrained', 'llama');
async function llamaStep(data: Dataset, batchSize: number, gradientAccumulationSteps: number) {
  const trainer = new Trainer({
    model: await fromPretrained(llamaFolder),
    loss: 'cross_entropy',
    optimizer: { name: 'sgd', lr: 1 },
    config: { numEpochs: 1, batchSize, gradientAccumulationSteps, shuffle: false, progressBar: false, numThreads: 1 },
  });
  const history = await trainer.fit(data);
  return { loss: history.epochs[0].loss, state: await trainer.stateDict() };
}

function maxDifference(
  a: Record<string, TensorData<NumericArray>>,
  b: Record<string, TensorData<NumericArray>>,
): number {
  let max = 0;
  for (const name of Object.keys(a)) {
    const [x, y] = [Array.from(a[name].data, Number), Array.from(b[name].data, Number)];
    x.forEach((value, i) => (max = Math.max(max, Math.abs(value - y[i]))));
  }
  return max;
}

describe('gradient accumulation with counted targets', function () {
  this.timeout(120_000);

  it('takes the step of one batch when micro-batches count different numbers of targets', async () => {
    const whole = await llamaStep(maskedTokens(), 8, 1);
    for (const [batchSize, steps] of [
      [4, 2],
      [2, 4],
    ]) {
      const accumulated = await llamaStep(maskedTokens(), batchSize, steps);
      // One SGD step at lr 1: the weights moved by the gradient itself.
      expect(maxDifference(accumulated.state, whole.state), `${batchSize} x ${steps}`).to.be.below(1e-6);
      expect(accumulated.loss).to.be.closeTo(whole.loss, 1e-6);
    }
  });

  it('lets a micro-batch whose targets are all ignored count for nothing, with no NaN', async () => {
    // The first micro-batch of 2 has no target left: a mean over it would be 0 / 0.
    const whole = await llamaStep(maskedTokens([0, 1]), 8, 1);
    const accumulated = await llamaStep(maskedTokens([0, 1]), 2, 4);
    expect(Number.isFinite(accumulated.loss)).to.equal(true);
    expect(maxDifference(accumulated.state, whole.state)).to.be.below(1e-6);
    expect(accumulated.loss).to.be.closeTo(whole.loss, 1e-6);
  });

  it("weighs class-weighted cross_entropy by its targets' weights, as one batch", async () => {
    const run = async (batchSize: number, gradientAccumulationSteps: number) => {
      const options: Partial<TrainerOptions> = {
        loss: { name: 'cross_entropy', weight: [0.2, 3] },
        optimizer: { name: 'sgd', lr: 0.5 },
      };
      const trainer = blobTrainer(
        { batchSize, gradientAccumulationSteps, numEpochs: 1, shuffle: false, seed: 1 },
        options,
      );
      const history = await trainer.fit(blobDataset(12, 4, 5));
      return { loss: history.epochs[0].loss, state: await trainer.stateDict() };
    };
    const whole = await run(12, 1);
    // Micro-batches of 3 hold different mixes of the two classes (their weights sum differently).
    const accumulated = await run(3, 4);
    expect(maxDifference(accumulated.state, whole.state)).to.be.below(1e-6);
    expect(accumulated.loss).to.be.closeTo(whole.loss, 1e-6);
  });
});
