// Metrics as JSON Lines: one object per logged step, hyper-parameters first.
import fs from 'node:fs';
import path from 'node:path';

import type { Logger, ScalarMetrics } from './logger';

export class JsonLinesLogger implements Logger {
  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  }

  logHyperparameters(hyperparameters: Record<string, unknown>): void {
    fs.appendFileSync(this.file, `${JSON.stringify({ hyperparameters })}\n`);
  }

  logMetrics(metrics: ScalarMetrics, step: number): void {
    fs.appendFileSync(this.file, `${JSON.stringify({ step, time: Date.now() / 1000, ...metrics })}\n`);
  }
}
