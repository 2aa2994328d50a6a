// firebrand report: versioned log folders (a second run beside the first
// keeps both), and one self-contained HTML page that loads in headless
// Chromium with no error, its curves holding the logged values, the best
// epoch's confusion matrix and per-class metrics, and a saved image
// classifier's misclassified validation images.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { Dataset, imageTransforms as T, nn, Trainer, writeReport, type History } from '../src';
import { chromium, loadPage } from './support/headless-chromium';
import { blobDataset, blobTrainer, rejectionOf } from './support/helpers';

const imageFolder = path.join(__dirname, '..', '..', 'test', 'fixtures', 'images', 'folder');
const cli = path.join(__dirname, '..', 'src', 'cli', 'main.js');

interface PageCheck {
  charts: { title: string; series: { label: string; points: [number, number][] }[] }[];
  errors: string[];
}

const unescape = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

/** The page's own account of its charts and errors, and its DOM, after Chromium ran it. */
async function renderedPage(file: string, profile: string): Promise<{ check: PageCheck; dom: string }> {
  const run = await loadPage(pathToFileURL(file).href, profile);
  const json = /<pre id="report-check"[^>]*>([^<]*)<\/pre>/.exec(run.stdout)?.[1];
  expect(json, `Chromium printed no check (status ${run.status}): ${run.stderr.slice(-2000)}`).to.be.a('string');
  // Chromium logs the page's console messages as CONSOLE lines; the page writes none.
  const consoleLines = run.stderr.split('\n').filter((line) => /:CONSOLE[:(]/.test(line));
  expect(consoleLines, 'console messages').to.deep.equal([]);
  return { check: JSON.parse(unescape(json as string)) as PageCheck, dom: run.stdout };
}

/** (step, value) of each metric of a metrics.jsonl, in its order. */
function loggedPoints(file: string): Record<string, [number, number][]> {
  const points: Record<string, [number, number][]> = {};
  for (const line of fs.readFileSync(file, 'utf8').trim().split('\n')) {
    const { step, time: _time, hyperparameters, ...metrics } = JSON.parse(line);
    if (hyperparameters !== undefined) continue;
    for (const [name, value] of Object.entries(metrics)) (points[name] ??= []).push([step, value as number]);
  }
  return points;
}

/** The cells of the first table after `heading` in the DOM. */
function tableCells(dom: string, heading: string): string[] {
  const at = dom.indexOf(heading);
  expect(at, `the page has no '${heading}'`).to.be.greaterThan(-1);
  const tableHtml = dom.slice(at, dom.indexOf('</table>', at));
  return [...tableHtml.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((match) => unescape(match[1]));
}

describe('firebrand report: an HTML page of runs, and versioned logs', function () {
  this.timeout(600_000);
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-report-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('gives each run its own logs/version_N, and draws both runs with the values they logged', async function () {
    if (chromium === undefined) {
      console.log('      skipped: no Chromium (apt-get install chromium)');
      this.skip();
    }
    const outputDir = path.join(root, 'run');
    const histories: History[] = [];
    for (const lr of [0.1, 0.02]) {
      const trainer = blobTrainer(
        {
          outputDir,
          numEpochs: 2,
          logEvery: 2,
          loggers: ['jsonl', 'csv'],
          metrics: ['confusionMatrix', 'classificationReport'],
        },
        { optimizer: { name: 'sgd', lr } },
      );
      histories.push(await trainer.fit(blobDataset(64), { evalData: blobDataset(32, 4, 2) }));
    }
    const versions = fs.readdirSync(path.join(outputDir, 'logs')).sort();
    expect(versions).to.deep.equal(['version_0', 'version_1']);
    const logged = versions.map((version) => loggedPoints(path.join(outputDir, 'logs', version, 'metrics.jsonl')));

    const file = await writeReport(outputDir);
    expect(file).to.equal(path.join(outputDir, 'report.html'));
    const { check, dom } = await renderedPage(file, root);
    expect(check.errors).to.deep.equal([]);
    const loss = check.charts.find((chart) => chart.title === 'loss');
    expect(loss?.series.map((series) => series.label)).to.deep.equal([
      'version_0 train',
      'version_0 val',
      'version_0 epoch',
      'version_1 train',
      'version_1 val',
      'version_1 epoch',
    ]);
    versions.forEach((version, run) => {
      for (const [group, metric] of [
        ['train', 'train/loss'],
        ['val', 'val/loss'],
        ['epoch', 'epoch/loss'],
      ]) {
        const drawn = loss?.series.find((series) => series.label === `${version} ${group}`)?.points;
        expect(drawn, `${version} ${metric}`).to.deep.equal(logged[run][metric]);
      }
    });
    const rate = check.charts.find((chart) => chart.title === 'learningRate');
    expect(rate?.series[0].points).to.deep.equal(logged[0]['train/learningRate']);
    expect(check.charts.map((chart) => chart.title)).to.include.members(['accuracy', 'stepsPerSecond']);

    // The latest checkpoint is the second run's; its best epoch's matrix and report are on the page.
    const history = histories[1];
    const facts = tableCells(dom, '<section class="run">');
    expect(facts[facts.indexOf('optimizer steps') + 1]).to.equal(String(history.epochs.at(-1)?.globalStep));
    expect(Number(facts[facts.indexOf('samples per second') + 1])).to.be.greaterThan(0);
    const best = history.epochs.find((epoch) => epoch.epoch === history.best?.epoch);
    const matrix = best?.valConfusionMatrix as number[][];
    const expectedMatrix = matrix.flatMap((row, index) => [`${index} (true)`, ...row.map(String)]);
    expect(tableCells(dom, `Confusion matrix, epoch ${best?.epoch}`)).to.deep.equal(expectedMatrix);
    const report = best?.valClassificationReport;
    const recallCells = tableCells(dom, 'Per-class metrics').filter((_cell, index) => index % 5 === 2);
    expect(recallCells.map(Number)).to.deep.equal(report?.recall.map((value) => Number(value.toPrecision(4))));
  });

  it("shows a saved image classifier's misclassified images, as many as the confusion matrix's misses", async function () {
    if (chromium === undefined) {
      console.log('      skipped: no Chromium (apt-get install chromium)');
      this.skip();
    }
    const outputDir = path.join(root, 'images');
    const transforms = [T.resize(20), T.centerCrop(16), T.toDtype('float32', { scale: true })];
    const data = (await Dataset.fromImageFolder(imageFolder)).withImageTransforms(...transforms);
    const trainer = new Trainer({
      model: nn.sequential(nn.conv2d(3, 6, 3), nn.relu(), nn.adaptiveAvgPool2d(1), nn.flatten(), nn.linear(6, 3)),
      loss: 'cross_entropy',
      optimizer: { name: 'sgd', lr: 0.05 },
      config: {
        numEpochs: 1,
        batchSize: 3,
        progressBar: false,
        numThreads: 1,
        seed: 3,
        outputDir,
        loggers: ['jsonl'],
        metrics: ['confusionMatrix'],
      },
    });
    const history = await trainer.fit(data, { evalData: data });
    const modelFolder = path.join(root, 'model');
    await trainer.save(modelFolder);

    const result = spawnSync(
      process.execPath,
      [cli, 'report', outputDir, '--model', modelFolder, '--images', imageFolder, '--out', path.join(root, 'r.html')],
      { encoding: 'utf8' },
    );
    expect(result.status, result.stderr).to.equal(0);
    expect(result.stdout).to.contain(path.join(root, 'r.html'));
    const { check, dom } = await renderedPage(path.join(root, 'r.html'), root);
    expect(check.errors).to.deep.equal([]);
    const matrix = history.epochs[0].valConfusionMatrix as number[][];
    const total = matrix.flat().reduce((sum, count) => sum + count, 0);
    const misses = total - matrix.reduce((sum, row, index) => sum + row[index], 0);
    expect(dom).to.contain(`gets ${misses} of ${total} images in ${imageFolder} wrong`);
    expect([...dom.matchAll(/<figure><img src="data:image\//g)]).to.have.length(misses);
    // The class names the saved model keeps label the matrix.
    const classes = fs.readdirSync(imageFolder).sort();
    expect(tableCells(dom, 'Confusion matrix, epoch 0').filter((cell) => cell.endsWith('(true)'))).to.deep.equal(
      classes.map((name) => `${name} (true)`),
    );
  });

  it('refuses what it cannot draw, saying why', async () => {
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty);
    expect((await rejectionOf(writeReport(empty))).message).to.contain("config.loggers: ['jsonl']");
    const trainer = blobTrainer({ outputDir: path.join(root, 'run'), numEpochs: 1, loggers: ['csv'] });
    await trainer.fit(blobDataset(32));
    const typo = await rejectionOf(writeReport(path.join(root, 'run'), { image: 'x' } as object));
    expect(typo.message).to.contain("'image'");
    // A run with the CSV logger alone is read from metrics.csv: the page carries its logged losses.
    const page = fs.readFileSync(await writeReport(path.join(root, 'run')), 'utf8');
    const carried = JSON.parse(
      /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(page)?.[1] ?? '',
    );
    const [header, ...rows] = fs
      .readFileSync(path.join(root, 'run', 'logs', 'version_0', 'metrics.csv'), 'utf8')
      .trim()
      .split('\n');
    const lossColumn = header.split(',').indexOf('train/loss');
    const logged = rows.map((row) => row.split(',')).filter((cells) => cells[lossColumn] !== '');
    const loss = carried.charts.find((chart: { title: string }) => chart.title === 'loss');
    const train = loss.series.find((series: { label: string }) => series.label === 'train').values;
    expect(train.filter((value: number | null) => value !== null)).to.deep.equal(
      logged.map((cells) => Number(cells[lossColumn])),
    );
    expect(logged.length).to.be.greaterThan(0);
    const noModel = await rejectionOf(writeReport(path.join(root, 'run'), { images: imageFolder }));
    expect(noModel.message).to.contain('needs model');
    const badTitle = await rejectionOf(writeReport(path.join(root, 'run'), { title: 7 as never }));
    expect(badTitle.message).to.equal('report: title must be a non-empty string, got 7');
    const result = spawnSync(process.execPath, [cli, 'report', path.join(root, 'run'), '--image', 'x'], {
      encoding: 'utf8',
    });
    expect(result.status).to.equal(2);
    expect(result.stderr).to.contain('report: unknown option --image');
  });
});
