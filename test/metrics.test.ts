// Metrics computed in C++ against scikit-learn's (scripts/make-golden-fixtures.py).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

import { Dataset, MetricName, nn, Tensor, Trainer } from '../src';
import { blobDataset, blobTrainer, rejectionOf, setupError } from './support/helpers';

const fixture = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'test', 'fixtures', 'golden-metrics.json'), 'utf8'),
);

// nn.flatten() on [N, C] has no parameters and returns its input: the data are the model outputs.
function identityTrainer(loss: 'cross_entropy' | 'mse', metrics: MetricName[]): Trainer {
  return new Trainer({
    model: nn.sequential(nn.flatten()),
    loss,
    optimizer: 'sgd',
    config: { metrics, progressBar: false, numThreads: 1, evalBatchSize: 64 },
  });
}

describe('metrics against scikit-learn', () => {
  it('classification: accuracy, top-k, macro, micro and weighted precision/recall/F1, the per-class report, confusion matrix, perplexity', async () => {
    const names = Object.keys(fixture.classification) as MetricName[];
    const data = Dataset.fromArrays({
      inputs: new Float64Array(fixture.logits.flat()),
      inputShape: [fixture.labels.length, fixture.classes],
      targets: new Int32Array(fixture.labels),
    });
    const result = await identityTrainer('cross_entropy', names).evaluate(data);
    expect(result.confusionMatrix).to.deep.equal(fixture.classification.confusionMatrix);
    // classification_report(labels=range(classes), zero_division=0), class by class.
    const report = fixture.classification.classificationReport as Record<string, number[]>;
    for (const [name, values] of Object.entries(report)) {
      const ours = result.classificationReport?.[name as 'precision'] ?? [];
      expect(ours, name).to.have.length(fixture.classes);
      values.forEach((value, c) => expect(ours[c], `${name} of class ${c}`).to.be.closeTo(value, 1e-12));
    }
    for (const name of names.filter((metric) => !['confusionMatrix', 'classificationReport'].includes(metric))) {
      expect(result[name as 'accuracy'], name).to.be.closeTo(
        fixture.classification[name],
        1e-5 * fixture.classification[name],
      );
    }
  });

  it("counts a language model's accuracy and macro averages over a 60,000-token vocabulary without a classes-squared matrix", async () => {
    // [2, 60000, 3] logits, the predicted token of each position set: a [C, C] matrix would be 28.8 GB.
    const [batch, classes, time] = [2, 60_000, 3];
    const logits = new Float32Array(batch * classes * time);
    const predicted = [
      [7, 59_999, 123],
      [7, 5, 40_000],
    ];
    predicted.forEach((row, b) => row.forEach((token, t) => (logits[(b * classes + token) * time + t] = 1)));
    const targets = new Int32Array([7, 59_999, 1, -100, 5, 40_000]);
    const data = Dataset.fromFields({
      input: { data: logits, shape: [batch, classes, time] },
      target: { data: targets, shape: [batch, time] },
    });
    const trainer = new Trainer({
      model: nn.sequential(nn.identity()),
      loss: 'cross_entropy',
      optimizer: 'sgd',
      config: { metrics: ['accuracy', 'f1Macro', 'recallMacro'], progressBar: false, numThreads: 1 },
    });
    const result = await trainer.evaluate(data);
    // 4 of the 5 counted positions right (the -100 left out); classes seen: 7, 59999, 1, 123, 5, 40000.
    expect(result.accuracy).to.be.closeTo(4 / 5, 1e-12);
    // recall per class in targets {7: 1, 59999: 1, 1: 0, 5: 1, 40000: 1}, and 123 (predicted only): 0.
    expect(result.recallMacro).to.be.closeTo(4 / 6, 1e-12);
    expect(result.f1Macro).to.be.closeTo(4 / 6, 1e-12);
  });

  it("scores a language model's classes-last logits as rows with the loss and metrics of the same logits on dim 1", async () => {
    // forward returns [N, T, C] transposed to [N, C, T]: the view is read as [N*T, C] rows, the copy as it is.
    class TransposedLogits extends nn.Module {
      constructor(private readonly copied: boolean) {
        super();
      }
      forward(x: Tensor): Tensor {
        const logits = x.transpose(1, 2);
        return this.copied ? logits.contiguous() : logits;
      }
    }
    const [batch, time, classes] = [3, 5, 7];
    const logits = Float32Array.from({ length: batch * time * classes }, (_, i) => Math.sin(i * 12.9898) * 4);
    const targets = Int32Array.from({ length: batch * time }, (_, i) => (i % 4 === 3 ? -100 : (i * 5) % classes));
    const data = Dataset.fromFields({
      input: { data: logits, shape: [batch, time, classes] },
      target: { data: targets, shape: [batch, time] },
    });
    const evaluated = (copied: boolean) =>
      new Trainer({
        model: new TransposedLogits(copied),
        loss: { name: 'cross_entropy', weight: [1, 2, 0.5, 1, 3, 1, 0.25], labelSmoothing: 0.1 },
        optimizer: 'sgd',
        config: {
          metrics: ['accuracy', 'top2Accuracy', 'f1Macro', 'confusionMatrix'],
          progressBar: false,
          numThreads: 1,
        },
      }).evaluate(data);
    const [rows, onDim1] = [await evaluated(false), await evaluated(true)];
    expect(rows.loss).to.be.closeTo(onDim1.loss, 1e-6 * Math.abs(onDim1.loss));
    expect(rows.confusionMatrix).to.deep.equal(onDim1.confusionMatrix);
    for (const name of ['accuracy', 'top2Accuracy', 'f1Macro'] as const)
      expect(rows[name], name).to.equal(onDim1[name]);
    expect(onDim1.accuracy).to.be.above(0).and.below(1);
  });

  it('regression: mse, mae and r2 over all target elements', async () => {
    const samples = fixture.targets.length;
    const data = Dataset.fromArrays({
      inputs: new Float64Array(fixture.outputs.flat()),
      inputShape: [samples, 2],
      targets: new Float64Array(fixture.targets.flat()),
      targetShape: [samples, 2],
    });
    const result = await identityTrainer('mse', ['mse', 'mae', 'r2']).evaluate(data);
    for (const name of ['mse', 'mae', 'r2'] as const) {
      expect(result[name], name).to.be.closeTo(fixture.regression[name], 1e-5);
    }
    expect(result.loss).to.be.closeTo(fixture.regression.mse, 1e-5);
  });

  it('reports training metrics and val-prefixed evaluation metrics per epoch', async () => {
    const trainer = blobTrainer({
      numEpochs: 2,
      metrics: ['f1Macro', 'confusionMatrix', 'top1Accuracy', 'f1Weighted', 'classificationReport'],
    });
    const history = await trainer.fit(blobDataset(128), { evalData: blobDataset(64, 4, 5) });
    const last = history.epochs[1];
    expect(last.accuracy).to.be.a('number');
    expect(last.top1Accuracy).to.equal(last.accuracy);
    expect(last.f1Macro).to.be.within(0.5, 1);
    expect(last.confusionMatrix!.flat().reduce((sum, count) => sum + count, 0)).to.equal(128);
    expect(last.valConfusionMatrix!.flat().reduce((sum, count) => sum + count, 0)).to.equal(64);
    expect(last.valF1Macro).to.be.within(0.5, 1);
    expect(last.valTop1Accuracy).to.equal(last.valAccuracy);
    // The per-class report is kept in the history; its supports are the rows of the confusion matrix.
    expect(last.valClassificationReport!.support).to.deep.equal(
      last.valConfusionMatrix!.map((row) => row.reduce((sum, count) => sum + count, 0)),
    );
    expect(last.f1Weighted).to.be.within(0.5, 1);
  });

  it('names unknown metrics and metrics that do not fit the loss', async () => {
    expect((await setupError(() => blobTrainer({ metrics: ['f1macro' as MetricName] }))).message).to.contain(
      "metrics: unknown metric 'f1macro' (did you mean 'f1Macro'?)",
    );
    expect((await setupError(() => blobTrainer({ metrics: ['r2'] }))).message).to.equal(
      "metrics: 'r2' needs a regression loss (mse, l1, huber, ...)",
    );
    expect((await setupError(() => identityTrainer('mse', ['accuracy']))).message).to.equal(
      "metrics: 'accuracy' needs a class-index loss (cross_entropy, nll)",
    );
    const data = Dataset.fromArrays({ inputs: new Float32Array(8), inputShape: [4, 2], targets: new Int32Array(4) });
    expect((await rejectionOf(identityTrainer('cross_entropy', []).fit(data))).message).to.contain(
      'the model has no parameters',
    );
  });
});
