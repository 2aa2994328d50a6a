// Checkpoints: layout, atomic saves, pruning, and exact resume, including
// after the process is killed with SIGKILL at a random step.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { loadSafetensors, nn, saveSafetensors, Trainer, TrainerConfig, TrainerState } from '../src';
import { blobDataset, rejectionOf } from './support/helpers';
import { RESUME_EPOCHS, resumeData, resumeTrainer } from './support/resume-run';
import { pruneCheckpoints } from '../src/training/checkpoints';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'data');

async function weightsOf(trainer: Trainer): Promise<Record<string, number[]>> {
  const state = await trainer.stateDict();
  return Object.fromEntries(
    Object.entries(state).map(([name, tensor]) => [name, Array.from(tensor.data as Float32Array)]),
  );
}

function temporaryDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-ckpt-'));
}

const stateOf = (folder: string) =>
  JSON.parse(fs.readFileSync(path.join(folder, 'trainer_state.json'), 'utf8')) as TrainerState;

describe('checkpoints and exact resume', function () {
  this.timeout(60_000);
  let reference: Record<string, number[]>;

  before(async () => {
    const trainer = resumeTrainer();
    await trainer.fit(resumeData());
    reference = await weightsOf(trainer);
  });

  it('resumes a run that maxSteps stopped at an epoch boundary from the next epoch, to the uninterrupted weights', async () => {
    // Without a schedule: maxSteps sets a schedule's horizon, which would differ between the runs.
    const run = (config: Partial<TrainerConfig>) =>
      new Trainer({
        model: nn.sequential(nn.linear(4, 16), nn.relu(), nn.dropout(0.3), nn.linear(16, 2)),
        loss: 'cross_entropy',
        optimizer: { name: 'adam', lr: 0.02 },
        config: { numEpochs: RESUME_EPOCHS, batchSize: 16, seed: 9, numThreads: 1, progressBar: false, ...config },
      });
    const whole = run({});
    await whole.fit(resumeData());
    const outputDir = temporaryDir();
    // 13 steps an epoch: maxSteps 13 stops on the boundary, after the epoch's last batch.
    await run({ outputDir, maxSteps: 13 }).fit(resumeData());
    const resumed = run({ outputDir, resumeFromCheckpoint: true });
    const history = await resumed.fit(resumeData());
    expect(history.epochs.map(({ epoch }) => epoch)).to.deep.equal([0, 1, 2]);
    expect(await weightsOf(resumed)).to.deep.equal(await weightsOf(whole));
  });

  it('refuses a second run on an outputDir another run is writing, and takes over a stale lock', async () => {
    const outputDir = temporaryDir();
    const first = resumeTrainer({ outputDir });
    const running = first.fit(resumeData());
    const second = await rejectionOf(resumeTrainer({ outputDir }).fit(resumeData()));
    expect(second.code).to.equal('ERR_FIREBRAND_INVALID_STATE');
    expect(second.message).to.contain(`${outputDir} is being written by another run (pid ${process.pid}`);
    await running;
    expect(await weightsOf(first), 'the first run is left alone').to.deep.equal(reference);
    expect(fs.existsSync(path.join(outputDir, '.firebrand.lock')), 'released at the end').to.equal(false);
    // A lock whose process is gone is stale: the next run takes it over.
    fs.writeFileSync(
      path.join(outputDir, '.firebrand.lock'),
      JSON.stringify({ pid: 2 ** 22 + 7, host: os.hostname() }),
    );
    const overStale = resumeTrainer({ outputDir });
    await overStale.fit(resumeData());
    expect(await weightsOf(overStale)).to.deep.equal(reference);
  });

  it('saves every saveEvery steps and at epoch ends, in the documented layout', async () => {
    const outputDir = temporaryDir();
    const trainer = resumeTrainer({ outputDir, saveEvery: 10, metricForBestModel: 'loss' });
    await trainer.fit(resumeData());
    expect(await weightsOf(trainer), 'checkpointing changes nothing').to.deep.equal(reference);
    const checkpoints = path.join(outputDir, 'checkpoints');
    const steps = fs
      .readdirSync(checkpoints)
      .filter((name) => name.startsWith('step-'))
      .map((name) => Number(name.slice(5)));
    expect(steps.sort((a, b) => a - b)).to.deep.equal([10, 13, 20, 26, 30, 39]);
    expect(fs.readFileSync(path.join(checkpoints, 'latest'), 'utf8').trim()).to.equal('step-39');
    const last = path.join(checkpoints, 'step-39');
    expect(fs.readdirSync(last).sort()).to.deep.equal([
      'model.safetensors',
      'optimizer.pt',
      'trainer_state.json',
      'training_state.safetensors',
    ]);
    const state = stateOf(last);
    expect(state).to.include({
      globalStep: 39,
      epoch: RESUME_EPOCHS,
      batchInEpoch: 0,
      worldSize: 1,
      interrupted: false,
      batchesPerEpoch: 13,
    });
    expect(state.history.epochs).to.have.length(RESUME_EPOCHS);
    expect(state.config).to.include({ batchSize: 16, seed: 9 });
    expect(state.history.best?.checkpoint).to.equal(
      path.join(
        checkpoints,
        `step-${state.history.epochs.reduce((best, e, i, all) => (e.loss < all[best].loss ? i : best), 0) * 13 + 13}`,
      ),
    );
    const midEpoch = stateOf(path.join(checkpoints, 'step-20'));
    expect(midEpoch).to.include({ epoch: 1, batchInEpoch: 7 });
    // The weights are a safetensors file any reader takes: the same tensors as stateDict().
    const model = await loadSafetensors(path.join(last, 'model.safetensors'));
    expect(
      Object.fromEntries(Object.entries(model.tensors).map(([name, t]) => [name, Array.from(t.data as Float32Array)])),
    ).to.deep.equal(reference);
    expect(model.metadata).to.deep.equal({ format: 'pt' });
    fs.rmSync(outputDir, { recursive: true });
  });

  it('resumes a stopped run, from the latest or any checkpoint, to bit-identical weights', async () => {
    const outputDir = temporaryDir();
    const stopped = resumeTrainer({ outputDir, saveEvery: 5 }, [
      {
        onLog: (logs, trainer) => {
          if (logs.globalStep >= 17) trainer.stopTraining = true;
        },
      },
    ]);
    const partial = await stopped.fit(resumeData());
    expect(partial.stopped).to.equal(true);
    const latest = path.join(
      outputDir,
      'checkpoints',
      fs.readFileSync(path.join(outputDir, 'checkpoints', 'latest'), 'utf8').trim(),
    );
    expect(stateOf(latest).interrupted).to.equal(true);

    const resumed = resumeTrainer({ outputDir, resumeFromCheckpoint: true });
    const history = await resumed.fit(resumeData());
    expect(history.epochs.map((epoch) => epoch.epoch)).to.deep.equal([0, 1, 2]);
    expect(await weightsOf(resumed)).to.deep.equal(reference);

    const fromStep10 = resumeTrainer({ resumeFromCheckpoint: path.join(outputDir, 'checkpoints', 'step-10') });
    await fromStep10.fit(resumeData());
    expect(await weightsOf(fromStep10)).to.deep.equal(reference);
    fs.rmSync(outputDir, { recursive: true });
  });

  it('continues after SIGKILL at a random step to the weights of an uninterrupted run', async () => {
    const outputDir = temporaryDir();
    const child = path.join(__dirname, 'support', 'resume-child.js');
    const killAt = 9 + Math.floor(Math.random() * 25);
    const run = (kill: boolean) =>
      new Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: string[] }>((resolve) => {
        const process = spawn(global.process.execPath, [child, outputDir], { stdio: ['ignore', 'pipe', 'inherit'] });
        const lines: string[] = [];
        let buffered = '';
        process.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString();
          const complete = buffered.split('\n');
          buffered = complete.pop() ?? '';
          for (const line of complete) {
            lines.push(line);
            if (kill && line === JSON.stringify({ step: killAt })) process.kill('SIGKILL');
          }
        });
        process.on('close', (code, signal) => resolve({ code, signal, lines }));
      });
    const killed = await run(true);
    expect(killed.signal, `killed at step ${killAt}`).to.equal('SIGKILL');
    const finished = await run(false);
    expect(finished.code, `resumed after a kill at step ${killAt}`).to.equal(0);
    const firstStep = JSON.parse(finished.lines[0]).step as number;
    expect(firstStep, 'the resumed run starts from a checkpoint, not from scratch').to.be.above(1);
    const { weights } = JSON.parse(finished.lines[finished.lines.length - 1]) as { weights: Record<string, number[]> };
    expect(weights, `killed at step ${killAt}`).to.deep.equal(reference);
    fs.rmSync(outputDir, { recursive: true });
  });

  it('keeps saveTotalLimit checkpoints but never the best or the latest, and ignores unfinished saves', async () => {
    const outputDir = temporaryDir();
    const checkpoints = path.join(outputDir, 'checkpoints');
    fs.mkdirSync(checkpoints, { recursive: true });
    // What a save killed half-way leaves: a temporary folder that `latest` never named.
    fs.mkdirSync(path.join(checkpoints, '.step-3.tmp-999999'));
    const trainer = resumeTrainer({ outputDir, saveTotalLimit: 1, metricForBestModel: 'valLoss', numEpochs: 4 });
    const history = await trainer.fit(resumeData(), { evalData: blobDataset(64) });
    const bestEpoch = history.epochs.reduce(
      (best, e, i, all) => ((e.valLoss ?? 0) < (all[best].valLoss ?? 0) ? i : best),
      0,
    );
    const left = fs
      .readdirSync(checkpoints)
      .filter((name) => name !== 'latest')
      .sort();
    const expected = [...new Set([`step-${(bestEpoch + 1) * 13}`, 'step-52'])].sort();
    expect(left).to.deep.equal(expected);
    fs.rmSync(outputDir, { recursive: true });
  });

  it('keeps saveTotalLimit checkpoints in all, the best and the latest counted among them', () => {
    const outputDir = temporaryDir();
    const checkpoints = path.join(outputDir, 'checkpoints');
    for (const step of [10, 20, 30, 40]) fs.mkdirSync(path.join(checkpoints, `step-${step}`), { recursive: true });
    pruneCheckpoints(outputDir, 2, [path.join(checkpoints, 'step-40'), path.join(checkpoints, 'step-10')]);
    expect(fs.readdirSync(checkpoints).sort()).to.deep.equal(['step-10', 'step-40']);
    pruneCheckpoints(outputDir, 3, [path.join(checkpoints, 'step-40'), undefined]);
    expect(fs.readdirSync(checkpoints).sort()).to.deep.equal(['step-10', 'step-40']);
    fs.mkdirSync(path.join(checkpoints, 'step-50'));
    pruneCheckpoints(outputDir, 2, [path.join(checkpoints, 'step-50'), path.join(checkpoints, 'step-50')]);
    expect(fs.readdirSync(checkpoints).sort()).to.deep.equal(['step-40', 'step-50']);
    fs.rmSync(outputDir, { recursive: true });
  });

  it('refuses to resume with a config or model that differs, saying what differs', async () => {
    const outputDir = temporaryDir();
    await resumeTrainer({ outputDir, numEpochs: 1 }).fit(resumeData());
    const other = await rejectionOf(
      resumeTrainer({ outputDir, resumeFromCheckpoint: true, batchSize: 8 }).fit(resumeData()),
    );
    expect(other.message).to.equal(
      `resumeFromCheckpoint: ${path.join(outputDir, 'checkpoints', 'step-13')} was saved with batchSize 16 (this run: 8), ` +
        '13 batches per epoch (this run: 25); they must match to continue exactly',
    );
    const wider = new Trainer({
      model: nn.sequential(nn.linear(4, 32), nn.relu(), nn.dropout(0.3), nn.linear(32, 2)),
      loss: 'cross_entropy',
      optimizer: 'adam',
      lrScheduler: { name: 'cosine', warmupSteps: 3 },
      config: { batchSize: 16, seed: 9, progressBar: false, outputDir, resumeFromCheckpoint: true },
    });
    const shape = await rejectionOf(wider.fit(resumeData()));
    expect(shape.message).to.equal(
      `${path.join(outputDir, 'checkpoints', 'step-13', 'model.safetensors')}: 3 weights do not fit the model: ` +
        "'0.bias' has shape [16] but the model's is [32], '0.weight' has shape [16, 4] but the model's is [32, 4], " +
        "'3.weight' has shape [2, 16] but the model's is [2, 32]",
    );
    fs.rmSync(outputDir, { recursive: true });
  });

  it('writes safetensors byte for byte as safetensors.torch.save_file does', async () => {
    const fixture = path.join(fixtures, 'tensors.safetensors');
    const { tensors, metadata } = await loadSafetensors(fixture);
    const copy = path.join(temporaryDir(), 'copy.safetensors');
    // float16/bfloat16 come back as float32; keep the fixture's other tensors, whose bytes must match exactly.
    const { input, target } = tensors;
    await saveSafetensors(copy, { input, target }, metadata);
    const again = await loadSafetensors(copy);
    expect(Array.from(again.tensors.input.data as Float32Array)).to.deep.equal(Array.from(input.data as Float32Array));
    const bytes = fs.readFileSync(copy);
    const headerLength = Number(bytes.readBigUInt64LE(0));
    expect(JSON.parse(bytes.subarray(8, 8 + headerLength).toString())).to.deep.equal({
      __metadata__: metadata,
      target: { dtype: 'I64', shape: [4], data_offsets: [0, 32] },
      input: { dtype: 'F32', shape: [4, 3], data_offsets: [32, 80] },
    });
    expect(headerLength % 8).to.equal(0);
    fs.rmSync(path.dirname(copy), { recursive: true });
  });

  it('initialises weights from a safetensors file PyTorch wrote, and reports names that do not match', async () => {
    const fixture = JSON.parse(fs.readFileSync(path.join(fixtures, 'pretrained-mlp.json'), 'utf8')) as {
      inputs: number[];
      outputs: number[];
    };
    const mlp = () =>
      new Trainer({
        model: nn.sequential(nn.linear(4, 16), nn.relu(), nn.linear(16, 2)),
        loss: 'cross_entropy',
        optimizer: 'sgd',
        config: { progressBar: false },
      });
    const trainer = mlp();
    expect(await trainer.initWeightsFrom(path.join(fixtures, 'pretrained-mlp.safetensors'))).to.deep.equal({
      missing: [],
      unexpected: [],
    });
    const predicted = await trainer.predict(Float32Array.from(fixture.inputs), [3, 4]);
    Array.from(predicted.data).forEach((value, i) => expect(value).to.be.closeTo(fixture.outputs[i], 1e-6));

    // A TorchScript module's weights under other names: strict refuses, non-strict reports.
    const scripted = path.join(__dirname, '..', '..', 'test', 'fixtures', 'scripted', 'classifier.pt');
    const strict = await rejectionOf(mlp().initWeightsFrom(scripted));
    expect(strict.message).to.match(
      /classifier\.pt: the weights do not match the model; missing: 0\.bias, 0\.weight, 2\.bias, 2\.weight; unexpected: /,
    );
    const report = await mlp().initWeightsFrom(scripted, { strict: false });
    expect(report.missing).to.deep.equal(['0.bias', '0.weight', '2.bias', '2.weight']);
    expect(report.unexpected.length).to.be.above(0);
    const wrongShape = new Trainer({
      model: nn.sequential(nn.linear(4, 8), nn.relu(), nn.linear(8, 2)),
      loss: 'mse',
      optimizer: 'sgd',
      config: { progressBar: false },
    });
    expect(
      (await rejectionOf(wrongShape.initWeightsFrom(path.join(fixtures, 'pretrained-mlp.safetensors')))).message,
    ).to.equal(
      `${path.join(fixtures, 'pretrained-mlp.safetensors')}: 3 weights do not fit the model: '0.bias' has shape [16] but the model's is [8], ` +
        "'0.weight' has shape [16, 4] but the model's is [8, 4], '2.weight' has shape [2, 16] but the model's is [2, 8]",
    );
  });
});
