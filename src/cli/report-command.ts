// `firebrand report OUTPUT_DIR [OUTPUT_DIR ...]`: writes writeReport's page.
import { type ReportOptions, writeReport } from '../report/write-report';
import { type FlagSetters, integerFlag, parseFlags } from './command-flags';
import { UsageError } from './usage-error';

export const REPORT_USAGE = `Usage: firebrand report OUTPUT_DIR [OUTPUT_DIR ...] [options]

Writes one self-contained HTML page (OUTPUT_DIR/report.html) from runs' logs (config.loggers 'jsonl' or
'csv', every logs/version_N) and latest checkpoints: loss, metric, learning-rate and throughput curves,
the best epoch's confusion matrix and per-class metrics, the config. Several OUTPUT_DIRs are drawn side by side.

Options:
  --out FILE          the page's path (default: the first OUTPUT_DIR's report.html)
  --title TEXT        the page's title
  --model DIR         a saved model (trainer.save, ModelCheckpoint): its class names label the tables
  --images DIR        a validation image folder (a subfolder per class): --model's misclassified images
  --max-images N      misclassified images shown at most (default 64)`;

export interface ReportCommand {
  outputDirs: string[];
  options: ReportOptions;
}

const FLAGS: FlagSetters<ReportOptions> = {
  '--out': (options, value) => (options.file = value()),
  '--title': (options, value) => (options.title = value()),
  '--model': (options, value) => (options.model = value()),
  '--images': (options, value) => (options.images = value()),
  '--max-images': (options, value, flag) => (options.maxImages = integerFlag(flag, value(), 0)),
};

/** report's arguments; undefined means --help. */
export function parseReportArguments(args: string[]): ReportCommand | undefined {
  const command: ReportCommand = { outputDirs: [], options: {} };
  if (!parseFlags('report', args, command.options, FLAGS, (folder) => command.outputDirs.push(folder)))
    return undefined;
  if (command.outputDirs.length === 0)
    throw new UsageError('report: give OUTPUT_DIR, a training run’s config.outputDir');
  return command;
}

export async function runReport(command: ReportCommand, print: (text: string) => void): Promise<void> {
  const file = await writeReport(command.outputDirs, command.options);
  print(`firebrand report: ${file}\n`);
}
