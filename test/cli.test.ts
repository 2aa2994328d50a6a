// `firebrand train run.json`: a whole run from one file, overrides, help and errors.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Model } from '../src';

const cli = path.join(__dirname, '..', 'src', 'cli', 'main.js');

function firebrand(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [cli, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, FORCE_COLOR: '0' },
  });
}

/** The run folders this file made, removed after its tests. */
const runFolders: string[] = [];

/** A folder with a small regression CSV and a run file training on it. */
function runFolder(run: Record<string, unknown> = {}): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-cli-'));
  runFolders.push(folder);
  const rows = Array.from({ length: 40 }, (_, i) => {
    const x = i / 40;
    return `${x},${1 - x},${(2 * x - 0.5).toFixed(4)}`;
  });
  fs.writeFileSync(path.join(folder, 'train.csv'), `a,b,y\n${rows.join('\n')}\n`);
  const spec = {
    model: { type: 'sequential', layers: [{ type: 'linear', inFeatures: 2, outFeatures: 1 }] },
    loss: 'mse',
    optimizer: { name: 'sgd', lr: 0.1 },
    data: {
      train: { format: 'csv', path: 'train.csv', options: { targets: 'value' } },
      eval: { format: 'csv', path: 'train.csv', options: { targets: 'value' } },
    },
    config: { numEpochs: 3, batchSize: 8, progressBar: false, numThreads: 1, outputDir: 'out' },
    callbacks: ['LearningRateMonitor', { name: 'EarlyStopping', options: { patience: 50 } }],
    saveModel: 'model',
    ...run,
  };
  fs.writeFileSync(path.join(folder, 'run.json'), JSON.stringify(spec, null, 2));
  return folder;
}

describe('command line', () => {
  after(() => {
    for (const folder of runFolders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
  });
  it('trains from a run file with --set overrides, saves the model and prints a summary', async () => {
    const folder = runFolder();
    const result = firebrand(['train', 'run.json', '--set', 'numEpochs=5', '--set', 'optimizer.lr=0.2'], folder);
    expect(result.status, result.stderr).to.equal(0);
    const summary = JSON.parse(result.stdout.trim().split('\n').at(-1) as string);
    expect(summary).to.include({ epochs: 5, globalStep: 25, stopped: false });
    expect(summary.best.metric).to.equal('valLoss');
    expect(summary.last.valLoss).to.be.below(0.05);
    expect(fs.existsSync(path.join(folder, 'out', 'checkpoints', 'step-25'))).to.equal(true);
    const model = await Model.load(path.join(folder, 'model'));
    const output = await model.predict(new Float32Array([0.5, 0.5]), [1, 2]);
    expect(output.data[0]).to.be.closeTo(0.5, 0.2);
  });

  it('trains a model written as TypeScript modules from a CommonJS file the run file names', async () => {
    const folder = runFolder({ model: { type: 'module', path: 'model.js', export: 'Net', args: [8] } });
    const firebrandIndex = path.join(__dirname, '..', 'src', 'index.js');
    fs.writeFileSync(
      path.join(folder, 'model.js'),
      `const { F, nn } = require(${JSON.stringify(firebrandIndex)});
class Net extends nn.Module {
  constructor(hidden) { super(); this.fc1 = nn.linear(2, hidden); this.fc2 = nn.linear(hidden, 1); }
  forward(x) { return this.fc2.forward(F.tanh(this.fc1.forward(x))); }
}
module.exports = { Net };
`,
    );
    const result = firebrand(['train', 'run.json', '--set', 'numEpochs=4'], folder);
    expect(result.status, result.stderr).to.equal(0);
    expect(JSON.parse(result.stdout.trim().split('\n').at(-1) as string)).to.include({ epochs: 4 });
    const model = await Model.load(path.join(folder, 'model'));
    expect(model.parameterCount).to.equal(2 * 8 + 8 + 8 + 1);

    fs.writeFileSync(
      path.join(folder, 'run.json'),
      JSON.stringify({
        ...JSON.parse(fs.readFileSync(path.join(folder, 'run.json'), 'utf8')),
        model: { type: 'module', path: 'model.js', export: 'Nett' },
      }),
    );
    const wrong = firebrand(['train', 'run.json'], folder);
    expect(wrong.status).to.equal(1);
    expect(wrong.stderr).to.contain('model.export: ');
    expect(wrong.stderr).to.contain("has no export 'Nett' (did you mean 'Net'?); it exports Net");
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it('trains from an image folder named in the run file, with its per-image transforms, and saves them', async () => {
    const images = path.join(__dirname, '..', '..', 'test', 'fixtures', 'images', 'folder');
    const transforms = [
      { name: 'resize', size: [12, 12] },
      { name: 'toDtype', dtype: 'float32', scale: true },
    ];
    const folder = runFolder({
      model: {
        type: 'sequential',
        layers: [{ type: 'flatten' }, { type: 'linear', inFeatures: 3 * 12 * 12, outFeatures: 3 }],
      },
      loss: 'cross_entropy',
      data: { train: { format: 'imageFolder', path: images, options: { transforms } } },
      callbacks: [],
    });
    const result = firebrand(['train', 'run.json'], folder);
    expect(result.status, result.stderr).to.equal(0);
    const saved = JSON.parse(fs.readFileSync(path.join(folder, 'model', 'preprocessing.json'), 'utf8'));
    expect(saved.images.classes).to.deep.equal(['Zebra', 'cat', 'dog']);
    expect(saved.images.transforms.map((spec: { name: string }) => spec.name)).to.deep.equal(['resize', 'toDtype']);
  });

  it('--help lists every config field with its default and what it accepts', () => {
    const result = firebrand(['train', '--help'], os.tmpdir());
    expect(result.status).to.equal(0);
    expect(result.stdout).to.contain('Usage: firebrand train <run.json> [--set key=value ...]');
    expect(result.stdout).to.match(/\n {2}numEpochs +3 +an integer >= 1\n/);
    expect(result.stdout).to.match(/\n {2}gradScaler\.initScale +65536 +a finite number > 0\n/);
    expect(result.stdout).to.match(/\n {2}distributed\.timeout +1800 +a finite number > 0\n/);
    expect(result.stdout).to.match(/\n {2}evalEvery +'epoch' +an integer >= 1 or 'epoch'\n/);
    // No field lacks a default: 'none' says there is none.
    expect(result.stdout).not.to.match(/\n {2}\S+ +- /);
  });

  it('doctor says what the install runs on, which optimizers fuse, and passes its smoke test', () => {
    const result = firebrand(['doctor'], os.tmpdir());
    expect(result.status, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/\nlibtorch: +\d+\.\d+/);
    expect(result.stdout).to.match(
      /\noptimizers: +fused one-pass steps for float32 CPU parameters: sgd, adam, adamw\n/,
    );
    expect(result.stdout).to.match(/\nsmoke test: +ok/);
    // The count a default trainer trains with (it once printed the JS thread's own 1).
    expect(result.stdout).to.contain(
      `\nthreads:      auto: ${os.availableParallelism()} or 1, whichever steps faster while training`,
    );
  });

  it('ends quietly when its reader closes the pipe early (doctor | head -1)', () => {
    const result = spawnSync('sh', ['-c', `"${process.execPath}" "${cli}" doctor | head -1`], {
      cwd: os.tmpdir(),
      encoding: 'utf8',
    });
    expect(result.stdout).to.match(/^firebrand: +\d+\.\d+\.\d+/);
    expect(result.stderr).to.equal('');
  });

  it('doctor diagnoses a binary that cannot load (a wrong libtorch on the library path) and exits 1', () => {
    // A stand-in libc10 with none of libtorch's symbols, found first through LD_LIBRARY_PATH.
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-wrong-libtorch-'));
    const source = path.join(folder, 'stub.c');
    fs.writeFileSync(source, 'int firebrand_stub(void) { return 0; }\n');
    for (const library of ['libc10.so', 'libc10.so.1.13', 'libc10.so.2.14']) {
      spawnSync('gcc', ['-shared', '-fPIC', `-Wl,-soname,${library}`, '-o', path.join(folder, library), source]);
    }
    const result = spawnSync(process.execPath, [cli, 'doctor'], {
      cwd: os.tmpdir(),
      encoding: 'utf8',
      env: { ...process.env, LD_LIBRARY_PATH: folder },
    });
    expect(result.status, result.stderr).to.equal(1);
    expect(result.stdout).to.match(/^firebrand: +\d+\.\d+\.\d+ \(Node v/);
    expect(result.stdout).to.contain(`library path: LD_LIBRARY_PATH=${folder}`);
    expect(result.stdout).to.match(/binary: +FAILED to load/);
    expect(result.stdout).to.match(
      /cannot load its (local build|prebuild) \S+firebrand\S*\.node: the libtorch found is not the one it was built against \(undefined symbol/,
    );
    expect(result.stdout).to.contain('To fix it:');
    expect(result.stdout).to.contain('FIREBRAND_BUILD_FROM_SOURCE=1 npm rebuild firebrand');
    fs.rmSync(folder, { recursive: true });
  });

  it('names what is wrong in a run file, an override or the command line', () => {
    const typo = firebrand(['train', 'run.json'], runFolder({ modle: {} }));
    expect(typo.status).to.equal(1);
    expect(typo.stderr).to.equal("firebrand: run.json.modle: unknown field (did you mean 'model'?)\n");
    const format = firebrand(['train', 'run.json', '--set', 'data.train.format=cvs'], runFolder());
    expect(format.stderr).to.contain(
      'data.train.format: got "cvs", expected one of idx, npy, npz, safetensors, csv, imageFolder, imageCsv (did you mean \'csv\'?)',
    );
    const config = firebrand(['train', 'run.json', '--set', 'batchSize=0', '--set', 'numEpoch=2'], runFolder());
    expect(config.stderr).to.contain('config has 2 problems');
    expect(config.stderr).to.contain('config.batchSize: got 0, expected an integer >= 1');
    expect(config.stderr).to.contain("config.numEpoch: unknown field (did you mean 'numEpochs'?)");
    const callback = firebrand(['train', 'run.json', '--set', 'callbacks=["EarlyStoping"]'], runFolder());
    expect(callback.stderr).to.contain("callbacks[0]: unknown callback 'EarlyStoping' (did you mean 'EarlyStopping'?)");
    const usage = firebrand(['trian'], os.tmpdir());
    expect(usage.status).to.equal(2);
    expect(usage.stderr).to.contain("unknown command 'trian' (did you mean 'train'?)");
    const missing = firebrand(['train', 'nowhere.json'], os.tmpdir());
    expect(missing.stderr).to.match(/^firebrand: nowhere\.json: cannot read the run file \(ENOENT/);
  });
});
