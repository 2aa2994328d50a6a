// The metric a built-in callback watches in the epoch logs, and what counts as better.
import { firebrandError } from '../errors';
import type { EpochLogs } from '../training/logs';

export type MonitorMode = 'min' | 'max' | 'auto';

export class MonitoredMetric {
  readonly greaterIsBetter: boolean;

  /** 'auto': lower is better for names with loss or error in them, higher otherwise. */
  constructor(
    readonly name: string,
    mode: MonitorMode,
    private readonly minDelta = 0,
  ) {
    this.greaterIsBetter = mode === 'max' || (mode === 'auto' && !/loss|error/i.test(name));
  }

  /** The monitored value in an epoch's logs, or an error naming what the logs hold. */
  valueIn(logs: EpochLogs, owner: string): number {
    const value = (logs as unknown as Record<string, unknown>)[this.name];
    if (typeof value !== 'number') {
      const available = Object.entries(logs)
        .filter(([, v]) => typeof v === 'number')
        .map(([k]) => k);
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `${owner}: monitors '${this.name}', which the epoch logs do not hold (they hold ${available.join(', ')}); pass evalData for val* metrics`,
      );
    }
    return value;
  }

  /** Whether `value` beats `best` by more than minDelta. */
  improves(value: number, best: number | undefined): boolean {
    if (best === undefined) return true;
    return this.greaterIsBetter ? value > best + this.minDelta : value < best - this.minDelta;
  }
}
