// Where training metrics go besides callbacks: CSV, JSON Lines, TensorBoard,
// or a user's own service. A logger is a plain object, so an adapter for W&B
// or Neptune is a few lines (see docs/guides/training.md: Loggers).

/** Scalars by name ('train/loss', 'val/accuracy', 'train/learningRate'), at one global step. */
export type ScalarMetrics = Record<string, number>;

export interface Logger {
  /** Once per fit, before training: the config and anything else that describes the run. */
  logHyperparameters?(hyperparameters: Record<string, unknown>): void;
  /** Called at every log step and epoch end; keep it quick (it runs on the event loop while C++ trains). */
  logMetrics(metrics: ScalarMetrics, step: number): void;
  /** Flushes and closes files; fit awaits it when it ends. */
  close?(): void | Promise<void>;
}
