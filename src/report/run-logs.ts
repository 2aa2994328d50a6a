// What the report draws of a run: every logged metric as (step, value) points,
// read from a log version folder's metrics.jsonl (or metrics.csv when only the
// CSV logger ran), and the hyper-parameters the JSON Lines logger wrote first.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { logsFolder, logVersions } from '../logging/log-versions';

/** One logged metric: steps and values, in logging order. */
export interface MetricSeries {
  steps: number[];
  values: number[];
}

/** One run's logs: a version folder of an outputDir. */
export interface RunLogs {
  /** 'version_0', or 'outputDir/version_0' when the report shows several outputDirs. */
  name: string;
  folder: string;
  metrics: Record<string, MetricSeries>;
  hyperparameters?: Record<string, unknown>;
}

function addPoint(metrics: Record<string, MetricSeries>, name: string, step: number, value: number): void {
  const series = (metrics[name] ??= { steps: [], values: [] });
  series.steps.push(step);
  series.values.push(value);
}

function readJsonLines(file: string, run: RunLogs): void {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch (error) {
      throw firebrandError('ERR_FIREBRAND_FILE', `${file}:${index + 1}: not JSON (${(error as Error).message})`);
    }
    if (entry.hyperparameters !== undefined) {
      run.hyperparameters = entry.hyperparameters as Record<string, unknown>;
      return;
    }
    const { step, time: _time, ...values } = entry;
    for (const [name, value] of Object.entries(values)) {
      if (typeof value === 'number') addPoint(run.metrics, name, step as number, value);
    }
  });
}

function readCsv(file: string, run: RunLogs): void {
  // The CSV logger writes numbers only, no quoting: a plain split is its format.
  const [header, ...rows] = fs.readFileSync(file, 'utf8').trim().split('\n');
  const columns = header.split(',');
  for (const row of rows) {
    const cells = row.split(',');
    const step = Number(cells[0]);
    columns.slice(1).forEach((name, index) => {
      const cell = cells[index + 1];
      if (cell !== undefined && cell !== '') addPoint(run.metrics, name, step, Number(cell));
    });
  }
}

function readRun(folder: string, name: string): RunLogs {
  const run: RunLogs = { name, folder, metrics: {} };
  const jsonl = path.join(folder, 'metrics.jsonl');
  const csv = path.join(folder, 'metrics.csv');
  if (fs.existsSync(jsonl)) readJsonLines(jsonl, run);
  else if (fs.existsSync(csv)) readCsv(csv, run);
  return run;
}

/** The runs logged under `outputDir`: its version folders, and a folder written before versions were kept. */
export function readRunLogs(outputDir: string, prefix: string): RunLogs[] {
  const legacy = logsFolder(outputDir);
  const folders = [
    ...(['metrics.jsonl', 'metrics.csv'].some((file) => fs.existsSync(path.join(legacy, file))) ? [legacy] : []),
    ...logVersions(outputDir),
  ];
  const runs = folders
    .map((folder) => readRun(folder, `${prefix}${path.basename(folder)}`))
    .filter((run) => Object.keys(run.metrics).length > 0);
  if (runs.length === 0) {
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `${outputDir}: no logged metrics (expected ${path.join(legacy, 'version_N', 'metrics.jsonl')} or metrics.csv); ` +
        "train with config.loggers: ['jsonl'] (or 'csv') and config.outputDir set",
    );
  }
  return runs;
}
