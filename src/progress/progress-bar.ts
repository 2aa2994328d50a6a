// Console progress, on rank 0 only. On a TTY a training bar per epoch and an
// evaluation bar, redrawn in place, with a moving average of the loss, steps/s
// and ETA; otherwise (pipes, CI logs) a plain line every logEvery steps, one
// per evaluation and one per epoch with its metrics.
import type { Callback, TrainBeginInfo } from '../training/callbacks';
import type { EpochLogs, EvalProgress, StepLogs, ValidationLogs } from '../training/logs';
import { BOOKKEEPING_FIELDS, isValidationField } from '../training/metrics';
import type { Trainer } from '../training/trainer';

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface ProgressBarOptions {
  /** Where to draw. Default process.stdout. */
  stream?: ProgressStream;
  /** Weight of the newest report in the loss's moving average. Default 0.1. */
  smoothing?: number;
}

const BAR_WIDTH = 24;
// Shown on their own (loss) or not at all (the rest).
const NOT_METRICS = new Set([...BOOKKEEPING_FIELDS, 'learningRate', 'loss']);

function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
}

function bar(done: number, total: number): string {
  const filled = Math.min(BAR_WIDTH, Math.round((BAR_WIDTH * done) / Math.max(total, 1)));
  return `[${'='.repeat(filled)}${filled < BAR_WIDTH ? '>' : ''}${' '.repeat(Math.max(0, BAR_WIDTH - filled - 1))}]`;
}

/** The scalar metrics of a log entry, as '  name 0.1234' (val* ones only if `validation`). */
function metricsText(logs: object, validation: boolean): string {
  return Object.entries(logs)
    .filter(([name, value]) => typeof value === 'number' && !NOT_METRICS.has(name) && isValidationField(name) === validation)
    .map(([name, value]) => `  ${name} ${(value as number).toFixed(4)}`)
    .join('');
}

export class ProgressBar implements Callback {
  private readonly stream: ProgressStream;
  private readonly smoothing: number;
  private numEpochs = 1;
  private averageLoss: number | undefined;
  private drawing = true;

  constructor(options: ProgressBarOptions | ProgressStream = {}) {
    const settings: ProgressBarOptions = 'write' in options ? { stream: options } : options;
    this.stream = settings.stream ?? process.stdout;
    this.smoothing = settings.smoothing ?? 0.1;
  }

  preFit(info: TrainBeginInfo, trainer: Trainer): void {
    this.numEpochs = info.numEpochs;
    this.drawing = trainer.globalRank === 0;
  }

  preEpoch(): void {
    this.averageLoss = undefined;
  }

  onProgress(logs: StepLogs): void {
    if (Number.isFinite(logs.loss)) {
      this.averageLoss = this.averageLoss === undefined ? logs.loss : this.averageLoss + this.smoothing * (logs.loss - this.averageLoss);
    }
    if (!this.drawing || !this.stream.isTTY) return;
    const rate = logs.step / Math.max(logs.elapsedSeconds, 1e-9);
    const stats = `  loss ${this.averageLoss?.toFixed(4) ?? '?'}  ${rate.toFixed(1)} steps/s`;
    if (logs.stepsInEpoch === undefined) {
      // Streamed data: no end is known, so no bar.
      this.redraw(`${this.epochLabel(logs.epoch)} step ${logs.step}${stats}`);
      return;
    }
    const eta = (logs.stepsInEpoch - logs.step) / rate;
    this.redraw(`${this.epochLabel(logs.epoch)} ${bar(logs.step, logs.stepsInEpoch)} ${logs.step}/${logs.stepsInEpoch}${stats}  eta ${formatSeconds(eta)}`);
  }

  onLog(logs: StepLogs): void {
    if (!this.drawing || this.stream.isTTY) return;
    const rate = logs.step / Math.max(logs.elapsedSeconds, 1e-9);
    this.stream.write(
      `${this.epochLabel(logs.epoch)} step ${logs.step}${logs.stepsInEpoch === undefined ? '' : `/${logs.stepsInEpoch}`}  loss ${logs.loss.toFixed(4)}` +
        `  lr ${logs.learningRate.toExponential(2)}  ${rate.toFixed(1)} steps/s\n`,
    );
  }

  onEvalProgress(progress: EvalProgress): void {
    if (!this.drawing || !this.stream.isTTY) return;
    const rate = progress.batch / Math.max(progress.elapsedSeconds, 1e-9);
    const shown =
      progress.batches === undefined
        ? `batch ${progress.batch}`
        : `${bar(progress.batch, progress.batches)} ${progress.batch}/${progress.batches}  eta ${formatSeconds((progress.batches - progress.batch) / rate)}`;
    this.redraw(`  validating ${shown}  ${rate.toFixed(1)} batches/s`);
  }

  postValidation(logs: ValidationLogs): void {
    if (!this.drawing) return;
    const line = `  validation at step ${logs.globalStep}:${metricsText(logs, true)}`;
    this.stream.write(this.stream.isTTY ? `\r\x1b[2K${line}\n` : `${line}\n`);
  }

  postEpoch(epoch: number, logs: EpochLogs): void {
    if (!this.drawing) return;
    const summary = `${this.epochLabel(epoch)} done in ${formatSeconds(logs.seconds)}  loss ${logs.loss.toFixed(4)}${metricsText(logs, false)}`;
    this.stream.write(this.stream.isTTY ? `\r\x1b[2K${summary}\n` : `${summary}\n`);
  }

  private redraw(line: string): void {
    this.stream.write(`\r\x1b[2K${line}`);
  }

  private epochLabel(epoch: number): string {
    return `epoch ${epoch + 1}/${this.numEpochs}`;
  }
}
