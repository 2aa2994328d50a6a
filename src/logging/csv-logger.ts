// Metrics as a CSV table: one row per logged step, one column per metric.
// When a metric appears for the first time the file is rewritten with the
// wider header, so the table stays rectangular (as Lightning's CSVLogger).
import fs from 'node:fs';
import path from 'node:path';

import type { Logger, ScalarMetrics } from './logger';

export class CsvLogger implements Logger {
  private readonly columns: string[] = ['step'];
  private readonly rows: Record<string, number>[] = [];

  /** Writes `file` (default name metrics.csv under a logs folder). */
  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  }

  logMetrics(metrics: ScalarMetrics, step: number): void {
    const row = { step, ...metrics };
    this.rows.push(row);
    const added = Object.keys(metrics).filter((name) => !this.columns.includes(name));
    if (added.length > 0 || this.rows.length === 1) {
      this.columns.push(...added);
      fs.writeFileSync(this.file, `${this.columns.join(',')}\n${this.rows.map((entry) => this.line(entry)).join('')}`);
    } else {
      fs.appendFileSync(this.file, this.line(row));
    }
  }

  private line(row: Record<string, number>): string {
    return `${this.columns.map((column) => (row[column] === undefined ? '' : String(row[column]))).join(',')}\n`;
  }
}
