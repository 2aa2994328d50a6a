// Metric names and the shapes they take in logs. Computed in C++ (native/core/metrics).

/** Scalar metrics; `top${k}Accuracy` works for any k (top5Accuracy). */
export type ScalarMetricName =
  | 'accuracy'
  | `top${number}Accuracy`
  | 'precisionMacro'
  | 'recallMacro'
  | 'f1Macro'
  | 'precisionMicro'
  | 'recallMicro'
  | 'f1Micro'
  | 'mse'
  | 'mae'
  | 'r2'
  | 'perplexity';

/** Any metric config.metrics may name. */
export type MetricName = ScalarMetricName | 'confusionMatrix';

/** Metric values by name; the confusion matrix has rows for true classes and columns for predictions. */
export type MetricLogs = { [Name in ScalarMetricName]?: number } & { confusionMatrix?: number[][] };

/** The same metrics from evaluation data, prefixed: valAccuracy, valF1Macro, valConfusionMatrix. */
export type ValMetricLogs = { [Name in ScalarMetricName as `val${Capitalize<Name>}`]?: number } & {
  valLoss?: number;
  valConfusionMatrix?: number[][];
};

/** Whether a log field comes from evaluation data: valLoss, valAccuracy (not 'value'). */
export function isValidationField(name: string): boolean {
  return /^val[A-Z]/.test(name);
}

/** Log fields that count things rather than measure the model. */
export const BOOKKEEPING_FIELDS: ReadonlySet<string> = new Set(['epoch', 'globalStep', 'steps', 'optimizerSteps', 'skippedSteps', 'samples', 'seconds']);

/** { accuracy: 0.9 } -> { valAccuracy: 0.9 }, for the logs of an evaluation during fit. */
export function prefixedWithVal(logs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(logs).map(([name, value]) => [`val${name.charAt(0).toUpperCase()}${name.slice(1)}`, value]),
  );
}
