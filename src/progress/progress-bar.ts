// Console progress: on a TTY one bar per epoch redrawn in place, with the
// loss averaged over the current log window and steps/s; otherwise (pipes,
// CI logs) a plain line every logEvery steps and one per epoch.
import type { Callback, TrainBeginInfo } from '../training/callbacks';
import type { EpochLogs, StepLogs } from '../training/logs';

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

const BAR_WIDTH = 24;

function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
}

function formatMetric(name: string, value: number | undefined): string {
  return value === undefined ? '' : `  ${name} ${value.toFixed(4)}`;
}

export class ProgressBar implements Callback {
  private numEpochs = 1;

  constructor(private readonly stream: ProgressStream = process.stdout) {}

  onTrainBegin(info: TrainBeginInfo): void {
    this.numEpochs = info.numEpochs;
  }

  onProgress(logs: StepLogs): void {
    if (!this.stream.isTTY) return;
    const rate = logs.step / Math.max(logs.elapsedSeconds, 1e-9);
    const stats = `  loss ${logs.loss.toFixed(4)}  ${rate.toFixed(1)} steps/s`;
    if (logs.stepsInEpoch === undefined) {
      // Streamed data: no end is known, so no bar.
      this.stream.write(`\r\x1b[2K${this.epochLabel(logs.epoch)} step ${logs.step}${stats}`);
      return;
    }
    const done = Math.round((BAR_WIDTH * logs.step) / logs.stepsInEpoch);
    const eta = (logs.stepsInEpoch - logs.step) / rate;
    const bar = '='.repeat(done) + (done < BAR_WIDTH ? '>' : '') + ' '.repeat(Math.max(0, BAR_WIDTH - done - 1));
    this.stream.write(
      `\r\x1b[2K${this.epochLabel(logs.epoch)} [${bar}] ${logs.step}/${logs.stepsInEpoch}${stats}` +
        `  eta ${formatSeconds(eta)}`,
    );
  }

  onLog(logs: StepLogs): void {
    if (this.stream.isTTY) return;
    const rate = logs.step / Math.max(logs.elapsedSeconds, 1e-9);
    this.stream.write(
      `${this.epochLabel(logs.epoch)} step ${logs.step}${logs.stepsInEpoch === undefined ? '' : `/${logs.stepsInEpoch}`}  loss ${logs.loss.toFixed(4)}` +
        `  lr ${logs.learningRate.toExponential(2)}  ${rate.toFixed(1)} steps/s\n`,
    );
  }

  onEpochEnd(epoch: number, logs: EpochLogs): void {
    const summary =
      `${this.epochLabel(epoch)} done in ${formatSeconds(logs.seconds)}  loss ${logs.loss.toFixed(4)}` +
      formatMetric('accuracy', logs.accuracy) +
      formatMetric('val_loss', logs.valLoss) +
      formatMetric('val_accuracy', logs.valAccuracy);
    this.stream.write(this.stream.isTTY ? `\r\x1b[2K${summary}\n` : `${summary}\n`);
  }

  private epochLabel(epoch: number): string {
    return `epoch ${epoch + 1}/${this.numEpochs}`;
  }
}
