// loss weight 'balanced' (scikit-learn's compute_class_weight('balanced')):
// computed from fit's training targets when fit starts, training exactly as
// the same weights given as a list; refused where it cannot be computed.
import { expect } from 'chai';

import { Dataset, nn, StreamingDataset, Trainer, type ClassWeights } from '../src';
import { rejectionOf } from './support/helpers';

// 12 samples of 3 classes, 7 / 4 / 1 of each, ignoreIndex -100 on one more.
const labels = [0, 0, 1, 0, 2, 0, 1, 0, 0, 1, 1, 0, -100];
const samples = labels.length;
const inputs = Float32Array.from({ length: samples * 4 }, (_, i) => Math.sin(i * 1.7));
const data = () => Dataset.fromArrays({ inputs, inputShape: [samples, 4], targets: Int32Array.from(labels) });

/** compute_class_weight('balanced', classes=np.unique(y), y=y): n_samples / (n_classes * np.bincount(y)). */
function sklearnBalanced(targets: number[]): number[] {
  const counted = targets.filter((label) => label !== -100);
  const classes = Math.max(...counted) + 1;
  const counts = Array.from({ length: classes }, (_, c) => counted.filter((label) => label === c).length);
  return counts.map((count) => counted.length / (classes * count));
}

function trainerWith(weight: ClassWeights, classes = 3): Trainer {
  return new Trainer({
    model: nn.sequential(nn.linear(4, classes)),
    loss: { name: 'cross_entropy', weight },
    optimizer: { name: 'sgd', lr: 0.5 },
    config: { numEpochs: 2, batchSize: 4, shuffle: false, progressBar: false, numThreads: 1, seed: 3 },
  });
}

describe("loss weight 'balanced': class weights from the training targets", () => {
  it('trains exactly as the weights compute_class_weight gives, passed as a list', async () => {
    const expected = sklearnBalanced(labels);
    expect(expected.map((w) => w.toFixed(4))).to.deep.equal(['0.5714', '1.0000', '4.0000']);
    const balanced = trainerWith('balanced');
    const listed = trainerWith(expected);
    const [first, second] = [await balanced.fit(data()), await listed.fit(data())];
    expect(first.epochs.map((epoch) => epoch.loss)).to.deep.equal(second.epochs.map((epoch) => epoch.loss));
    expect(await balanced.model.stateDict()).to.deep.equal(await listed.model.stateDict());
    // Unweighted training differs: the weights were applied.
    const plain = new Trainer({
      model: nn.sequential(nn.linear(4, 3)),
      loss: 'cross_entropy',
      optimizer: { name: 'sgd', lr: 0.5 },
      config: { numEpochs: 2, batchSize: 4, shuffle: false, progressBar: false, numThreads: 1, seed: 3 },
    });
    expect((await plain.fit(data())).epochs[0].loss).to.not.equal(first.epochs[0].loss);
  });

  it('refuses a class without a training sample, a model with more classes, evaluation before fit and a stream', async () => {
    const missing = Dataset.fromArrays({
      inputs: new Float32Array(12),
      inputShape: [3, 4],
      targets: Int32Array.from([0, 2, 2]),
    });
    const absent = await rejectionOf(trainerWith('balanced').fit(missing));
    expect(absent.message).to.contain("weight 'balanced': class 1 has no sample among the 3 training targets");
    const wider = await rejectionOf(trainerWith('balanced', 4).fit(data()));
    expect(wider.message).to.contain(
      "holds 3 class weights ('balanced': the training targets' labels 0 to 2) but the model has 4 outputs",
    );
    const early = await rejectionOf(trainerWith('balanced').evaluate(data()));
    expect(early.message).to.contain("weight 'balanced' comes from fit's training targets");
    const stream = new StreamingDataset(function* () {
      yield {
        input: { data: inputs.slice(0, 16), shape: [4, 4] },
        target: { data: Int32Array.from([0, 1, 2, 0]), shape: [4] },
      };
    });
    const streamed = await rejectionOf(trainerWith('balanced').fit(stream));
    expect(streamed.message).to.contain("weight 'balanced' counts the classes of a dataset's targets");
    const wrong = await rejectionOf(trainerWith('balance' as never).fit(data()));
    expect(wrong.message).to.contain("'balanced'");
  });
});
