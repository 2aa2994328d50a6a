// Console progress, on rank 0 only. On a TTY a training bar per epoch and an
// evaluation bar, redrawn in place, with a moving average of the loss, steps/s
// and ETA; otherwise (pipes, CI logs) a plain line every logEvery steps, one
// per evaluation and one per epoch with its metrics.
import type { Callback, TrainBeginInfo, TrainerView } from '../training/callbacks';
import type { EpochLogs, EvalProgress, History, StepLogs, ValidationLogs } from '../training/logs';
import { BOOKKEEPING_FIELDS, isValidationField } from '../training/metrics';

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  /** The terminal's width (a TTY's `columns`); 80 when unknown. */
  columns?: number;
}

export interface ProgressBarOptions {
  /** Where to draw. Default process.stdout. */
  stream?: ProgressStream;
  /** Weight of the newest report in the loss's moving average. Default 0.1. */
  smoothing?: number;
}

const BAR_WIDTH = 24;
// Optional parts give way before the bar gets narrower than this...
const COMFORTABLE_BAR_WIDTH = 16;
// ...and narrower than this the bar is left out rather than drawn unreadably.
const MIN_BAR_WIDTH = 8;
// Shown on their own (loss) or not at all (the rest).
const NOT_METRICS = new Set([...BOOKKEEPING_FIELDS, 'learningRate', 'loss']);

function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
}

function bar(done: number, total: number, width: number): string {
  const filled = Math.min(width, Math.round((width * done) / Math.max(total, 1)));
  return `[${'='.repeat(filled)}${filled < width ? '>' : ''}${' '.repeat(Math.max(0, width - filled - 1))}]`;
}

/**
 * One line of at most `columns - 1` characters (a full-width line wraps on many terminals, and every
 * redraw would then start a new line). Optional parts go from the end while the bar would be narrower
 * than COMFORTABLE_BAR_WIDTH; then the bar shrinks to MIN_BAR_WIDTH, then goes; then the line is cut.
 */
export function fitLine(
  columns: number,
  head: string,
  progress: { done: number; total: number } | undefined,
  parts: string[],
  optional: string[],
): string {
  const room = Math.max(columns - 1, 1);
  for (let kept = optional.length; kept >= 0; kept--) {
    const rest = parts.join('') + optional.slice(0, kept).join('');
    const free = room - head.length - rest.length;
    if (progress === undefined) {
      if (free >= 0) return `${head}${rest}`;
      continue;
    }
    const width = Math.min(BAR_WIDTH, free - 3);
    if (width >= COMFORTABLE_BAR_WIDTH || (kept === 0 && width >= MIN_BAR_WIDTH)) {
      return `${head} ${bar(progress.done, progress.total, width)}${rest}`;
    }
  }
  return `${head}${parts.join('')}`.slice(0, room);
}

/**
 * The learning rates as users need them: one when all groups share it, else each by name (the
 * optimizer's name is left out when there is only one: 'pg0 1.00e-4 pg1 1.00e-2').
 */
export function learningRatesText(rates: number[], names: string[]): string {
  if (rates.length === 0) return '';
  if (rates.every((rate) => rate === rates[0])) return `lr ${rates[0].toExponential(2)}`;
  const prefix =
    names.length > 0 && names.every((name) => name.startsWith(`${names[0].split('/')[0]}/`))
      ? `${names[0].split('/')[0]}/`
      : '';
  return `lr ${rates.map((rate, i) => `${(names[i] ?? `#${i}`).slice(prefix.length)} ${rate.toExponential(2)}`).join(' ')}`;
}

/** The scalar metrics of a log entry, as '  name 0.1234' (val* ones only if `validation`). */
function metricsText(logs: object, validation: boolean): string {
  return Object.entries(logs)
    .filter(
      ([name, value]) => typeof value === 'number' && !NOT_METRICS.has(name) && isValidationField(name) === validation,
    )
    .map(([name, value]) => `  ${name} ${(value as number).toFixed(4)}`)
    .join('');
}

export class ProgressBar implements Callback {
  private readonly stream: ProgressStream;
  private readonly smoothing: number;
  private numEpochs = 1;
  private averageLoss: number | undefined;
  private drawing = true;
  private learningRateNames: string[] = [];

  constructor(options: ProgressBarOptions | ProgressStream = {}) {
    const settings: ProgressBarOptions = 'write' in options ? { stream: options } : options;
    this.stream = settings.stream ?? process.stdout;
    this.smoothing = settings.smoothing ?? 0.1;
  }

  preFit(info: TrainBeginInfo, trainer: TrainerView): void {
    this.numEpochs = info.numEpochs;
    this.drawing = trainer.globalRank === 0;
    this.learningRateNames = trainer.learningRateNames;
  }

  preEpoch(): void {
    this.averageLoss = undefined;
  }

  onProgress(logs: StepLogs): void {
    if (Number.isFinite(logs.loss)) {
      this.averageLoss =
        this.averageLoss === undefined ? logs.loss : this.averageLoss + this.smoothing * (logs.loss - this.averageLoss);
    }
    if (!this.drawing || !this.stream.isTTY) return;
    const rate = logs.step / Math.max(logs.elapsedSeconds, 1e-9);
    const loss = `  loss ${this.averageLoss?.toFixed(4) ?? '?'}`;
    const optional = [
      `  ${rate.toFixed(1)} steps/s`,
      `  ${learningRatesText(logs.learningRates, this.learningRateNames)}`,
    ];
    if (logs.stepsInEpoch === undefined) {
      // Streamed data: no end is known, so no bar.
      this.redraw(
        fitLine(this.columns, this.epochLabel(logs.epoch), undefined, [` step ${logs.step}`, loss], optional),
      );
      return;
    }
    const eta = `  eta ${formatSeconds((logs.stepsInEpoch - logs.step) / rate)}`;
    const progress = { done: logs.step, total: logs.stepsInEpoch };
    this.redraw(
      fitLine(
        this.columns,
        this.epochLabel(logs.epoch),
        progress,
        [` ${logs.step}/${logs.stepsInEpoch}`, loss],
        [eta, ...optional],
      ),
    );
  }

  onLog(logs: StepLogs): void {
    if (!this.drawing || this.stream.isTTY) return;
    const rate = logs.step / Math.max(logs.elapsedSeconds, 1e-9);
    this.stream.write(
      `${this.epochLabel(logs.epoch)} step ${logs.step}${logs.stepsInEpoch === undefined ? '' : `/${logs.stepsInEpoch}`}  loss ${logs.loss.toFixed(4)}` +
        `  ${learningRatesText(logs.learningRates, this.learningRateNames)}  ${rate.toFixed(1)} steps/s\n`,
    );
  }

  onEvalProgress(progress: EvalProgress): void {
    if (!this.drawing || !this.stream.isTTY) return;
    const rate = progress.batch / Math.max(progress.elapsedSeconds, 1e-9);
    const speed = `  ${rate.toFixed(1)} batches/s`;
    if (progress.batches === undefined) {
      this.redraw(fitLine(this.columns, '  validating', undefined, [` batch ${progress.batch}`], [speed]));
      return;
    }
    const eta = `  eta ${formatSeconds((progress.batches - progress.batch) / rate)}`;
    const done = { done: progress.batch, total: progress.batches };
    this.redraw(fitLine(this.columns, '  validating', done, [` ${progress.batch}/${progress.batches}`], [eta, speed]));
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

  /** After fit: why it stopped early, when it did. */
  postFit(history: History): void {
    if (!this.drawing || history.stopReason === undefined) return;
    const line = `stopped: ${history.stopReason}`;
    this.stream.write(this.stream.isTTY ? `\r\x1b[2K${line}\n` : `${line}\n`);
  }

  private get columns(): number {
    return this.stream.columns !== undefined && this.stream.columns > 0 ? this.stream.columns : 80;
  }

  private redraw(line: string): void {
    this.stream.write(`\r\x1b[2K${line}`);
  }

  private epochLabel(epoch: number): string {
    return `epoch ${epoch + 1}/${this.numEpochs}`;
  }
}
