// writeReport: one self-contained HTML page over one or more runs' outputDirs
// (firebrand report OUTPUT_DIR ...): curves from the logs, what the latest
// checkpoint knows, and optionally a saved classifier's misses on an image folder.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { Model } from '../inference/model';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';
import { misclassifiedImages } from './misclassified-images';
import { type MisclassifiedSection, reportPage, type RunSection } from './report-page';
import { reportCharts } from './report-charts';
import { readRunLogs } from './run-logs';
import { readRunSummary } from './run-summary';

export interface ReportOptions {
  /** The page's path. Default: the first outputDir's report.html. */
  file?: string;
  /** The page's title. Default: 'firebrand report: ' and the outputDirs. */
  title?: string;
  /** A folder Model.load reads (trainer.save's, ModelCheckpoint's best): its class names label the tables. */
  model?: string;
  /** A validation image folder (a subfolder per class): `model`'s misclassified images are shown as a grid. */
  images?: string;
  /** Misclassified images shown at most. Default 64. */
  maxImages?: number;
}

const OPTION_KEYS = optionKeys<ReportOptions>()(['file', 'title', 'model', 'images', 'maxImages']);

async function misclassifiedSection(model: Model, options: ReportOptions): Promise<MisclassifiedSection> {
  const limit = options.maxImages ?? 64;
  if (!Number.isInteger(limit) || limit < 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `report: maxImages must be a whole number >= 0, got ${limit}`,
    );
  }
  const found = await misclassifiedImages(model, options.images as string, limit);
  return { model: options.model as string, folder: options.images as string, ...found };
}

/**
 * Writes the report of the runs in `outputDirs` (each run's logs/version_N folders; several outputDirs put
 * their runs side by side) and returns the page's path.
 */
export async function writeReport(outputDirs: string | string[], options: ReportOptions = {}): Promise<string> {
  refuseUnknownKeys(options, OPTION_KEYS, 'report options');
  for (const key of ['file', 'title', 'model', 'images'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `report: ${key} must be a non-empty string, got ${JSON.stringify(value)}`,
      );
    }
  }
  const folders = typeof outputDirs === 'string' ? [outputDirs] : outputDirs;
  if (folders.length === 0) throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'report: no outputDir given');
  if (options.images !== undefined && options.model === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `report: images (${options.images}) needs model, the saved folder whose misclassified images to show`,
    );
  }
  const prefix = (folder: string) => (folders.length > 1 ? `${path.basename(path.resolve(folder))}/` : '');
  const runs = folders.flatMap((folder) => readRunLogs(folder, prefix(folder)));
  const model = options.model === undefined ? undefined : await Model.load(options.model);
  const classes = model?.classes?.map(String);
  const sections: RunSection[] = folders.map((outputDir) => ({
    outputDir,
    summary: readRunSummary(outputDir),
    classes,
  }));
  const misclassified = model && options.images !== undefined ? await misclassifiedSection(model, options) : undefined;
  const file = options.file ?? path.join(folders[0], 'report.html');
  const title = options.title ?? `firebrand report: ${folders.join(', ')}`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, reportPage(title, reportCharts(runs), sections, misclassified));
  return file;
}
