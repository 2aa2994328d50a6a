// Fine-tuning: freezing by module path, name or glob (config.freeze and
// trainer.freeze), frozen modules kept in eval mode so that every frozen
// parameter and buffer ends bit-identical, unfreezing mid-fit into a new
// optimizer group, and checkpoints that resume all of it exactly.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Callback, Module, ModelLike, nn, NumericArray, Tensor, TensorData, Trainer, TrainerConfig } from '../src';
import { blobDataset, errorOf, rejectionOf } from './helpers';

/** A backbone with BatchNorm and dropout (whose statistics and masks must not move when frozen) and a head. */
class Finetuned extends Module {
  backbone = nn.sequential(nn.linear(4, 16), nn.batchNorm1d(16), nn.relu(), nn.dropout(0.5), nn.linear(16, 16), nn.batchNorm1d(16));
  head = nn.sequential(nn.linear(16, 16), nn.batchNorm1d(16), nn.relu(), nn.linear(16, 2));

  forward(x: Tensor): Tensor {
    return this.head.forward(this.backbone.forward(x));
  }
}

const config: Partial<TrainerConfig> = { numEpochs: 3, batchSize: 16, progressBar: false, numThreads: 1, seed: 5 };
const trainerOf = (model: ModelLike, more: Partial<TrainerConfig> = {}, callbacks: Callback[] = []) =>
  new Trainer({ model, loss: 'cross_entropy', optimizer: { name: 'adamw', lr: 1e-2, weightDecay: 0.1 }, config: { ...config, ...more }, callbacks });

type State = Record<string, TensorData<NumericArray>>;
const under = (state: State, prefix: string) => Object.keys(state).filter((name) => name.startsWith(prefix));
const same = (a: TensorData<NumericArray>, b: TensorData<NumericArray>) => Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength).equals(Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength));

describe('fine-tuning', function () {
  this.timeout(120_000);

  it('leaves every frozen parameter and buffer (BatchNorm statistics too) bit-identical while the head trains', async () => {
    const trainer = trainerOf(new Finetuned(), { freeze: 'backbone' });
    await trainer.setup();
    const before = await trainer.stateDict();
    await trainer.fit(blobDataset(128));
    const after = await trainer.stateDict();
    const backbone = under(before, 'backbone.');
    expect(backbone).to.include.members(['backbone.1.running_mean', 'backbone.1.num_batches_tracked', 'backbone.5.running_var']);
    for (const name of backbone) expect(same(before[name], after[name]), name).to.equal(true);
    for (const name of ['head.0.weight', 'head.1.running_mean', 'head.3.bias']) expect(same(before[name], after[name]), name).to.equal(false);
    // Only the head's parameters are in the optimizer: one group, as without freezing.
    expect(trainer.learningRateNames).to.deep.equal(['adamw']);
  });

  it('freezes by parameter name and glob, in layer stacks and TorchScript models', async () => {
    const stack = trainerOf(nn.sequential(nn.linear(4, 8), nn.relu(), nn.linear(8, 8), nn.relu(), nn.linear(8, 2)), { freeze: ['0.*', '2.bias'] });
    await stack.setup();
    const before = await stack.stateDict();
    await stack.fit(blobDataset(64));
    const after = await stack.stateDict();
    for (const name of Object.keys(before)) expect(same(before[name], after[name]), name).to.equal(['0.weight', '0.bias', '2.bias'].includes(name));

    // A module scripted in Python (hidden, out): its submodules' paths.
    const scripted = trainerOf(nn.torchScript(path.join(__dirname, '..', '..', 'test', 'fixtures', 'scripted', 'classifier.pt')));
    expect(await scripted.freeze('hid*')).to.deep.equal(['hidden.weight', 'hidden.bias']);
    const start = await scripted.stateDict();
    await scripted.fit(blobDataset(64));
    const end = await scripted.stateDict();
    for (const name of Object.keys(start)) expect(same(start[name], end[name]), name).to.equal(name.startsWith('hidden.'));
  });

  it('unfreezes mid-fit from a callback (BaseFinetuning): a new optimizer group with its own learning rate', async () => {
    const rates: number[][] = [];
    const unfreezeAfterFirstEpoch: Callback = {
      async postEpoch(epoch: number, _logs: unknown, trainer: Trainer) {
        rates.push(trainer.learningRates);
        if (epoch === 0) expect(await trainer.unfreeze('backbone', { lr: 1e-3 })).to.have.length(8);
      },
    };
    const trainer = trainerOf(new Finetuned(), { freeze: 'backbone' }, [unfreezeAfterFirstEpoch]);
    await trainer.setup();
    const start = await trainer.stateDict();
    await trainer.fit(blobDataset(128));
    expect(trainer.learningRateNames).to.deep.equal(['adamw/pg0', 'adamw/pg1']);
    expect(rates).to.deep.equal([[1e-2], [1e-2, 1e-3], [1e-2, 1e-3]]);
    // Frozen in the first epoch, the backbone trained (and its BatchNorm counted batches) in the others.
    const end = await trainer.stateDict();
    for (const name of ['backbone.0.weight', 'backbone.1.running_mean']) expect(same(end[name], start[name]), name).to.equal(false);
    // Without lr: the first group's / 10, as Lightning's.
    const other = trainerOf(new Finetuned(), { freeze: ['backbone', 'head.0'] });
    await other.unfreeze('head.0');
    expect(other.learningRates).to.deep.equal([1e-2, 1e-3]);
  });

  it('resumes a run that froze and unfroze to the same weights as the run that did not stop', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-finetune-resume-'));
    try {
      const unfreezeAtFirstEpochEnd: Callback = {
        async postEpoch(epoch: number, _logs: unknown, trainer: Trainer) {
          if (epoch === 0) await trainer.unfreeze('backbone.0');
        },
      };
      const full = trainerOf(new Finetuned(), { freeze: 'backbone', outputDir: path.join(root, 'full') }, [unfreezeAtFirstEpochEnd]);
      await full.fit(blobDataset(96));
      const resumed = trainerOf(new Finetuned(), { freeze: 'backbone', resumeFromCheckpoint: path.join(root, 'full', 'checkpoints', 'step-12') }, [
        unfreezeAtFirstEpochEnd,
      ]);
      await resumed.fit(blobDataset(96));
      expect(resumed.learningRateNames).to.deep.equal(['adamw/pg0', 'adamw/pg1']);
      const [a, b] = [await full.stateDict(), await resumed.stateDict()];
      for (const name of Object.keys(a)) expect(same(a[name], b[name]), name).to.equal(true);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('names a pattern that matches nothing, and refuses to freeze everything', async () => {
    const nothing = await rejectionOf(trainerOf(new Finetuned(), { freeze: ['backbone', 'neck'] }).setup());
    expect(nothing.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(nothing.message).to.contain("config.freeze: 'neck' matches no parameter or module; parameter names look like 'backbone.0.weight', 'backbone.0.bias'");
    const everything = await rejectionOf(trainerOf(new Finetuned(), { freeze: '**' }).setup());
    expect(everything.message).to.equal('config.freeze: that freezes every parameter of the model (14 matched), leaving nothing to train');
    const trainer = trainerOf(new Finetuned(), { freeze: 'backbone' });
    expect((await rejectionOf(trainer.freeze('head'))).message).to.contain('freeze: that freezes every parameter of the model');
    expect((await rejectionOf(trainer.unfreeze('head.7'))).message).to.contain("unfreeze: 'head.7' matches no parameter or module");
    expect((await rejectionOf(trainer.unfreeze('backbone', { lr: -1 }))).message).to.equal('unfreeze.lr: got -1.000000, expected a number >= 0');
    expect(errorOf(() => trainerOf(new Finetuned(), { freeze: 3 as unknown as string })).message).to.contain('config.freeze: got 3, expected a non-empty string or a list of strings');
  });
});
