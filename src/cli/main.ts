#!/usr/bin/env node
// The firebrand command line: `firebrand <command> ...`.
import { runDoctor } from './doctor-command';
import { LAUNCH_USAGE, parseLaunchArguments, runLaunch } from './launch-command';
import { parseReportArguments, REPORT_USAGE, runReport } from './report-command';
import { parseServeArguments, runServe, SERVE_USAGE } from './serve-command';
import { parseTrainArguments, runTrain, trainHelp } from './train-command';
import { UsageError } from './usage-error';
import { didYouMean } from '../options/closest-match';

const USAGE = `Usage: firebrand <command> [arguments]

Commands:
  train <run.json> [--set key=value ...]   train from a run file (firebrand train --help)
  launch --nproc-per-node N script.js ...  start N ranks of a script, as torchrun (firebrand launch --help)
  serve MODEL_DIR [--port N] [--host H]   an OpenAI-compatible server over a language model (firebrand serve --help)
  report OUTPUT_DIR [...]                  an HTML page of runs' curves and metrics (firebrand report --help)
  doctor                                   what this install runs on, and a one-step training smoke test
`;

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === 'launch') {
    const options = parseLaunchArguments(rest);
    if (options === undefined) {
      process.stdout.write(`${LAUNCH_USAGE}\n`);
      return 0;
    }
    return runLaunch(options);
  }
  if (command === 'doctor') return runDoctor((text) => process.stdout.write(text));
  if (command === 'serve') {
    const options = parseServeArguments(rest);
    if (options === undefined) process.stdout.write(`${SERVE_USAGE}\n`);
    else await runServe(options, (text) => process.stdout.write(text));
    return 0;
  }
  if (command === 'report') {
    const options = parseReportArguments(rest);
    if (options === undefined) process.stdout.write(`${REPORT_USAGE}\n`);
    else await runReport(options, (text) => process.stdout.write(text));
    return 0;
  }
  if (command !== 'train') {
    const commands = ['train', 'launch', 'serve', 'report', 'doctor'];
    throw new UsageError(`unknown command '${command}'${didYouMean(command, commands)}`);
  }
  const parsed = parseTrainArguments(rest);
  if (parsed === undefined) {
    process.stdout.write(trainHelp());
    return 0;
  }
  await runTrain(parsed.file, parsed.overrides, (text) => process.stdout.write(text));
  return 0;
}

// `firebrand doctor | head`: a reader that closes the pipe early ends the command quietly, as Unix tools do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`firebrand: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write(`\n${USAGE}`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
