// Fine-tuning: freezing by module path, name or glob (config.freeze and
// trainer.freeze), frozen modules kept in eval mode so that every frozen
// parameter and buffer ends bit-identical, unfreezing mid-fit into a new
// optimizer group, and checkpoints that resume all of it exactly.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  Callback,
  F,
  loadSafetensors,
  Module,
  ModelLike,
  nn,
  NumericArray,
  saveSafetensors,
  Tensor,
  TensorData,
  Trainer,
  TrainerConfig,
} from '../src';
import { blobDataset, errorOf, rejectionOf } from './support/helpers';

/** A backbone with BatchNorm and dropout (whose statistics and masks must not move when frozen) and a head. */
class Finetuned extends Module {
  backbone = nn.sequential(
    nn.linear(4, 16),
    nn.batchNorm1d(16),
    nn.relu(),
    nn.dropout(0.5),
    nn.linear(16, 16),
    nn.batchNorm1d(16),
  );
  head = nn.sequential(nn.linear(16, 16), nn.batchNorm1d(16), nn.relu(), nn.linear(16, 2));

  forward(x: Tensor): Tensor {
    return this.head.forward(this.backbone.forward(x));
  }
}

const config: Partial<TrainerConfig> = { numEpochs: 3, batchSize: 16, progressBar: false, numThreads: 1, seed: 5 };
const trainerOf = (model: ModelLike, more: Partial<TrainerConfig> = {}, callbacks: Callback[] = []) =>
  new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-2, weightDecay: 0.1 },
    config: { ...config, ...more },
    callbacks,
  });

type State = Record<string, TensorData<NumericArray>>;
const under = (state: State, prefix: string) => Object.keys(state).filter((name) => name.startsWith(prefix));
const same = (a: TensorData<NumericArray>, b: TensorData<NumericArray>) =>
  Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength).equals(
    Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength),
  );

describe('fine-tuning', function () {
  this.timeout(120_000);

  it('leaves every frozen parameter and buffer (BatchNorm statistics too) bit-identical while the head trains', async () => {
    const trainer = trainerOf(new Finetuned(), { freeze: 'backbone' });
    await trainer.setup();
    const before = await trainer.stateDict();
    await trainer.fit(blobDataset(128));
    const after = await trainer.stateDict();
    const backbone = under(before, 'backbone.');
    expect(backbone).to.include.members([
      'backbone.1.running_mean',
      'backbone.1.num_batches_tracked',
      'backbone.5.running_var',
    ]);
    for (const name of backbone) expect(same(before[name], after[name]), name).to.equal(true);
    for (const name of ['head.0.weight', 'head.1.running_mean', 'head.3.bias'])
      expect(same(before[name], after[name]), name).to.equal(false);
    // Only the head's parameters are in the optimizer: one group, as without freezing.
    expect(trainer.learningRateNames).to.deep.equal(['adamw']);
  });

  it('runs a frozen module in eval mode, its dropout layers, F.dropout calls and attention dropout off', async () => {
    // With lr 0 the weights never move, and each epoch is the same one batch: the losses differ only
    // where something random still runs in the frozen backbone.
    class FrozenDropouts extends Module {
      backbone = new Backbone();
      head = nn.sequential(nn.linear(16, 16), nn.batchNorm1d(16), nn.relu(), nn.linear(16, 2));

      forward(x: Tensor): Tensor {
        return this.head.forward(this.backbone.forward(x));
      }
    }
    class Backbone extends Module {
      layers = nn.sequential(nn.linear(4, 16), nn.dropout(0.5), nn.relu());
      attention = nn.multiheadAttention(16, 2, { dropout: 0.5, batchFirst: true });

      forward(x: Tensor): Tensor {
        const hidden = F.dropout(this.layers.forward(x), 0.5).unsqueeze(1);
        return this.attention.forward(hidden, hidden, hidden)[0].squeeze(1);
      }
    }
    const losses = async (freeze: string | undefined) => {
      const trainer = new Trainer({
        model: new FrozenDropouts(),
        loss: 'cross_entropy',
        optimizer: { name: 'sgd', lr: 0 },
        config: { ...config, numEpochs: 3, batchSize: 32, shuffle: false, ...(freeze ? { freeze } : {}) },
      });
      return (await trainer.fit(blobDataset(32))).epochs.map((epoch) => epoch.loss);
    };
    const frozen = await losses('backbone');
    expect(new Set(frozen).size, `losses ${frozen.join(', ')}`).to.equal(1);
    // The same model with nothing frozen draws new masks each epoch: the check above could fail.
    const training = await losses(undefined);
    expect(new Set(training).size, `losses ${training.join(', ')}`).to.equal(3);
  });

  it('keeps frozen modules in eval mode across predictions, and follows what is frozen', async () => {
    // Each prediction (and each generated token) puts the model in eval mode and back, setting the frozen
    // modules' modes again: from the paths resolved once, until what is frozen changes.
    const block = (width: number) => nn.sequential(nn.linear(width, 16), nn.dropout(0.5), nn.relu());
    const trainer = new Trainer({
      model: nn.sequential(block(4), block(16), nn.linear(16, 2)),
      loss: 'cross_entropy',
      optimizer: { name: 'sgd', lr: 0 },
      config: { ...config, numEpochs: 3, batchSize: 32, shuffle: false, freeze: ['0', '1'] },
    });
    const data = blobDataset(32);
    const batch = { data: Float32Array.from({ length: 8 }, (_, i) => i / 8), shape: [2, 4] };
    const lossesOf = async () => {
      await trainer.predict(batch.data, batch.shape);
      return (await trainer.fit(data)).epochs.map((epoch) => epoch.loss);
    };
    for (const round of [1, 2]) {
      const frozen = await lossesOf();
      expect(new Set(frozen).size, `round ${round}: losses ${frozen.join(', ')}`).to.equal(1);
    }
    await trainer.unfreeze('1');
    // One block unfrozen, its dropout draws new masks each epoch: the checks above could fail.
    const training = await lossesOf();
    expect(new Set(training).size, `losses ${training.join(', ')}`).to.equal(3);
    await trainer.freeze('1');
    const refrozen = await lossesOf();
    expect(new Set(refrozen).size, `losses ${refrozen.join(', ')}`).to.equal(1);
  });

  it('freezes by parameter name and glob, in layer stacks and TorchScript models', async () => {
    const stack = trainerOf(nn.sequential(nn.linear(4, 8), nn.relu(), nn.linear(8, 8), nn.relu(), nn.linear(8, 2)), {
      freeze: ['0.*', '2.bias'],
    });
    await stack.setup();
    const before = await stack.stateDict();
    await stack.fit(blobDataset(64));
    const after = await stack.stateDict();
    for (const name of Object.keys(before))
      expect(same(before[name], after[name]), name).to.equal(['0.weight', '0.bias', '2.bias'].includes(name));

    // A module scripted in Python (hidden, out): its submodules' paths.
    const scripted = trainerOf(
      nn.torchScript(path.join(__dirname, '..', '..', 'test', 'fixtures', 'scripted', 'classifier.pt')),
    );
    expect(await scripted.freeze('hid*')).to.deep.equal(['hidden.weight', 'hidden.bias']);
    const start = await scripted.stateDict();
    await scripted.fit(blobDataset(64));
    const end = await scripted.stateDict();
    for (const name of Object.keys(start))
      expect(same(start[name], end[name]), name).to.equal(name.startsWith('hidden.'));
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
    for (const name of ['backbone.0.weight', 'backbone.1.running_mean'])
      expect(same(end[name], start[name]), name).to.equal(false);
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
      const full = trainerOf(new Finetuned(), { freeze: 'backbone', outputDir: path.join(root, 'full') }, [
        unfreezeAtFirstEpochEnd,
      ]);
      await full.fit(blobDataset(96));
      const resumed = trainerOf(
        new Finetuned(),
        { freeze: 'backbone', resumeFromCheckpoint: path.join(root, 'full', 'checkpoints', 'step-12') },
        [unfreezeAtFirstEpochEnd],
      );
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
    expect(nothing.message).to.contain(
      "config.freeze: 'neck' matches no parameter or module; parameter names look like 'backbone.0.weight', 'backbone.0.bias'",
    );
    const everything = await rejectionOf(trainerOf(new Finetuned(), { freeze: '**' }).setup());
    expect(everything.message).to.equal(
      'config.freeze: that freezes every parameter of the model (14 matched), leaving nothing to train',
    );
    const trainer = trainerOf(new Finetuned(), { freeze: 'backbone' });
    expect((await rejectionOf(trainer.freeze('head'))).message).to.contain(
      'freeze: that freezes every parameter of the model',
    );
    expect((await rejectionOf(trainer.unfreeze('head.7'))).message).to.contain(
      "unfreeze: 'head.7' matches no parameter or module",
    );
    // A parameter group for a frozen module says so.
    const grouped = new Trainer({
      model: new Finetuned(),
      loss: 'cross_entropy',
      optimizer: { name: 'adamw', lr: 1e-2, paramGroups: [{ params: ['backbone.'], lr: 1e-4 }] },
      config: { ...config, freeze: 'backbone' },
    });
    expect((await rejectionOf(grouped.setup())).message).to.contain(
      "optimizer.paramGroups[0]: 'backbone.' takes only frozen parameters (config.freeze), which no optimizer holds until they are unfrozen",
    );
    // A module that exists but holds no parameters is named as such.
    const relu = await rejectionOf(trainer.freeze('head.2'));
    expect(relu.message).to.equal(
      "freeze: 'head.2' takes module 'head.2', which has no parameters (an activation, pooling or dropout layer has none), so it takes nothing",
    );
    expect((await rejectionOf(trainer.unfreeze('backbone', { lr: -1 }))).message).to.equal(
      'unfreeze.lr: got -1, expected a number >= 0',
    );
    expect(errorOf(() => trainerOf(new Finetuned(), { freeze: 3 as unknown as string })).message).to.contain(
      'config.freeze: got 3, expected a non-empty string or a list of strings',
    );
  });

  describe('an exponential moving average of the weights (config.ema)', () => {
    it('evaluates on the averages and ends on them (golden against PyTorch in golden.test.ts)', async () => {
      const data = blobDataset(96);
      const evalData = blobDataset(32, 4, 7);
      for (const evaluate of [true, false]) {
        const trainer = trainerOf(new Finetuned(), { ema: { enabled: true, decay: 0.9, evaluate } });
        const history = await trainer.fit(data, { evalData });
        // After fit the model holds the averages, which the last epoch's evaluation saw only with evaluate on.
        const { loss } = await trainer.evaluate(evalData);
        expect(history.epochs[2].valLoss === loss, `evaluate: ${evaluate}`).to.equal(evaluate);
      }
    });

    it('checkpoints the averages (ema.safetensors) and resumes them exactly; loadBestModelAtEnd takes the best ones', async () => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-ema-'));
      try {
        const ema = { enabled: true, decay: 0.8, warmup: true };
        const full = trainerOf(new Finetuned(), { ema, outputDir: path.join(root, 'full') });
        await full.fit(blobDataset(96));
        const checkpoint = path.join(root, 'full', 'checkpoints', 'step-12');
        expect(fs.existsSync(path.join(checkpoint, 'ema.safetensors'))).to.equal(true);
        const resumed = trainerOf(new Finetuned(), { ema, resumeFromCheckpoint: checkpoint });
        await resumed.fit(blobDataset(96));
        const [a, b] = [await full.stateDict(), await resumed.stateDict()];
        for (const name of Object.keys(a)) expect(same(a[name], b[name]), name).to.equal(true);
        // Without config.ema the checkpoint does not fit, and the reverse says what is missing.
        const plain = trainerOf(new Finetuned(), { outputDir: path.join(root, 'plain') });
        await plain.fit(blobDataset(96), { numEpochs: 1 });
        const missing = await rejectionOf(
          trainerOf(new Finetuned(), {
            ema,
            resumeFromCheckpoint: path.join(root, 'plain', 'checkpoints', 'step-6'),
          }).fit(blobDataset(96)),
        );
        expect(missing.message).to.contain(
          'ema.safetensors: missing; the checkpoint was saved without config.ema, which this trainer has',
        );

        const best = trainerOf(new Finetuned(), {
          ema,
          outputDir: path.join(root, 'best'),
          loadBestModelAtEnd: true,
          metricForBestModel: 'loss',
          greaterIsBetter: true,
        });
        const history = await best.fit(blobDataset(96));
        const averages = await loadSafetensors(path.join(history.best!.checkpoint!, 'ema.safetensors'));
        const state = await best.stateDict();
        for (const name of Object.keys(state)) expect(same(state[name], averages.tensors[name]), name).to.equal(true);
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
    });
  });

  describe('activation checkpointing (config.activationCheckpointing)', () => {
    /** Residual blocks with dropout and BatchNorm: the recomputation must draw the same masks and not move the statistics twice. */
    class Block extends Module {
      linear = nn.linear(16, 16);
      norm = nn.batchNorm1d(16);
      dropout = nn.dropout(0.3);
      forward(x: Tensor): Tensor {
        return x.add(this.dropout.forward(F.relu(this.norm.forward(this.linear.forward(x)))));
      }
    }
    class Deep extends Module {
      stem = nn.linear(4, 16);
      blocks = nn.moduleList([new Block(), new Block(), new Block()]);
      head = nn.linear(16, 2);
      forward(x: Tensor): Tensor {
        let h = this.stem.forward(x);
        for (const block of this.blocks as unknown as Iterable<Block>) h = block.forward(h);
        return this.head.forward(h);
      }
    }

    it('gives the same losses, weights and BatchNorm statistics bit for bit (dropout on)', async () => {
      const run = async (activationCheckpointing?: string) => {
        const trainer = trainerOf(new Deep(), { activationCheckpointing, gradientAccumulationSteps: 2 });
        const history = await trainer.fit(blobDataset(96));
        return { losses: history.epochs.map((epoch) => epoch.loss), state: await trainer.stateDict() };
      };
      const plain = await run();
      for (const pattern of ['blocks.*', 'blocks', 'blocks.1']) {
        const checkpointed = await run(pattern);
        expect(checkpointed.losses, pattern).to.deep.equal(plain.losses);
        for (const name of Object.keys(plain.state))
          expect(same(checkpointed.state[name], plain.state[name]), `${pattern}: ${name}`).to.equal(true);
      }
    });

    it('names a pattern that matches no module, a module that runs nothing, and a model that cannot', async () => {
      const nothing = await rejectionOf(trainerOf(new Deep(), { activationCheckpointing: 'trunk' }).setup());
      expect(nothing.message).to.contain("config.activationCheckpointing: 'trunk' matches no parameter or module");
      class Unused extends Deep {
        spare = nn.linear(2, 2);
      }
      const unused = await rejectionOf(trainerOf(new Unused(), { activationCheckpointing: 'spare' }).setup());
      expect(unused.message).to.contain("config.activationCheckpointing: module 'spare' runs no op in forward");
      // An nn.sequential is a traced module, which recomputes; a TorchScript model cannot.
      await trainerOf(nn.sequential(nn.linear(4, 2)), { activationCheckpointing: '0' }).setup();
      const script = nn.script('\ndef forward(self, x):\n    return x.matmul(self.weight)\n', [
        { name: 'weight', data: new Float32Array(8), shape: [4, 2] },
      ]);
      const scripted = await rejectionOf(trainerOf(script, { activationCheckpointing: 'weight' }).setup());
      expect(scripted.message).to.contain(
        'config.activationCheckpointing: only models written as TypeScript modules recompute activations',
      );
    });
  });

  describe('initWeightsFrom with a map', () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-weights-map-'));
    after(() => fs.rmSync(folder, { recursive: true, force: true }));

    /** A trained model's weights saved as DDP saves them: every name under 'module.'. */
    const savedUnderModule = async () => {
      const source = trainerOf(new Finetuned());
      await source.fit(blobDataset(64));
      const state = await source.stateDict();
      const file = path.join(folder, 'ddp.safetensors');
      await saveSafetensors(
        file,
        Object.fromEntries(Object.entries(state).map(([name, value]) => [`module.${name}`, value])),
      );
      return { file, state };
    };

    it("renames by prefix ('module.' off; the longest prefix wins) and loads strictly", async () => {
      const { file, state } = await savedUnderModule();
      const target = trainerOf(new Finetuned());
      expect(await target.initWeightsFrom(file, { map: { 'module.': '' } })).to.deep.equal({
        missing: [],
        unexpected: [],
      });
      const loaded = await target.stateDict();
      for (const name of Object.keys(state)) expect(same(loaded[name], state[name]), name).to.equal(true);
      // The longest prefix wins: the head goes elsewhere, so strict loading names what is left over.
      const error = await rejectionOf(
        trainerOf(new Finetuned()).initWeightsFrom(file, { map: { 'module.': '', 'module.head.': 'classifier.' } }),
      );
      expect(error.message).to.contain('the weights do not match the model; missing: head.0.bias');
      expect(error.message).to.contain('unexpected: classifier.0.bias');
    });

    it('renames or drops by a function, reporting what is missing when not strict', async () => {
      const { file, state } = await savedUnderModule();
      const target = trainerOf(new Finetuned());
      const report = await target.initWeightsFrom(file, {
        strict: false,
        map: (name) => (name.startsWith('module.head.') ? null : name.slice('module.'.length)),
      });
      expect(report.unexpected).to.deep.equal([]);
      expect(report.missing).to.have.members(under(state, 'head.'));
      const loaded = await target.stateDict();
      for (const name of under(state, 'backbone.')) expect(same(loaded[name], state[name]), name).to.equal(true);
      expect(same(loaded['head.0.weight'], state['head.0.weight'])).to.equal(false);
    });

    it('converts bf16 and fp16 weights to the model dtype', async () => {
      // safetensors written by hand: one [2, 2] tensor as bf16 (the high half of each float32) and fp16.
      const values = [0.5, -1.25, 3, 1024];
      const bf16 = new Uint16Array(new Uint32Array(Float32Array.from(values).buffer).map((bits) => bits >>> 16));
      const fp16 = Uint16Array.of(0x3800, 0xbd00, 0x4200, 0x6400);
      const write = (name: string, dtype: string, data: Uint16Array) => {
        const header = Buffer.from(
          JSON.stringify({
            '0.weight': { dtype, shape: [2, 2], data_offsets: [0, 8] },
            '0.bias': { dtype, shape: [2], data_offsets: [8, 12] },
          }),
        );
        const length = Buffer.alloc(8);
        length.writeBigUInt64LE(BigInt(header.length));
        const file = path.join(folder, name);
        fs.writeFileSync(
          file,
          Buffer.concat([length, header, Buffer.from(data.buffer), Buffer.from(data.buffer, 0, 4)]),
        );
        return file;
      };
      for (const [dtype, data] of [
        ['BF16', bf16],
        ['F16', fp16],
      ] as const) {
        const trainer = trainerOf(nn.sequential(nn.linear(2, 2)));
        await trainer.initWeightsFrom(write(`${dtype}.safetensors`, dtype, data));
        const state = await trainer.stateDict();
        expect(state['0.weight'].data).to.be.instanceOf(Float32Array);
        expect(Array.from(state['0.weight'].data as Float32Array), dtype).to.deep.equal(values);
        expect(Array.from(state['0.bias'].data as Float32Array), dtype).to.deep.equal(values.slice(0, 2));
      }
    });

    it('names a prefix that matches nothing, a bad return value and two weights given one name', async () => {
      const { file } = await savedUnderModule();
      const cases: [() => Promise<unknown>, string][] = [
        [
          () => trainerOf(new Finetuned()).initWeightsFrom(file, { map: { 'model.': '' } }),
          "initWeightsFrom.map: no weight name starts with 'model.'; the file's names look like 'module.",
        ],
        [
          () => trainerOf(new Finetuned()).initWeightsFrom(file, { map: () => 3 as unknown as string }),
          "initWeightsFrom.map('module.",
        ],
        [
          () => trainerOf(new Finetuned()).initWeightsFrom(file, { map: () => 'head.0.weight' }),
          "the map gives weights 'module.",
        ],
      ];
      for (const [load, message] of cases) {
        const error = await rejectionOf(load());
        expect(error.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
        expect(error.message).to.contain(message);
      }
    });
  });
});
