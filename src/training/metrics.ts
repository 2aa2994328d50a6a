// Metric names, which ones a loss allows, and the shapes they take in logs.
// Computed in C++ (native/core/metrics).
import { firebrandError } from '../errors';
import { didYouMean } from '../options/closest-match';

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
  | 'precisionWeighted'
  | 'recallWeighted'
  | 'f1Weighted'
  | 'mse'
  | 'mae'
  | 'r2'
  | 'perplexity';

/** Any metric config.metrics may name. */
export type MetricName = ScalarMetricName | 'confusionMatrix' | 'classificationReport';

/**
 * Each class's precision, recall, F1 and support (its samples among the targets), indexed by class, as
 * scikit-learn's classification_report(labels=range(classes), zero_division=0) gives them.
 */
export interface ClassificationReport {
  precision: number[];
  recall: number[];
  f1: number[];
  support: number[];
}

/** Metric values by name; the confusion matrix has rows for true classes and columns for predictions. */
export type MetricLogs = { [Name in ScalarMetricName]?: number } & {
  confusionMatrix?: number[][];
  classificationReport?: ClassificationReport;
};

/** The same metrics from evaluation data, prefixed: valAccuracy, valF1Macro, valConfusionMatrix. */
export type ValMetricLogs = { [Name in ScalarMetricName as `val${Capitalize<Name>}`]?: number } & {
  valLoss?: number;
  valConfusionMatrix?: number[][];
  valClassificationReport?: ClassificationReport;
};

/** Whether a log field comes from evaluation data: valLoss, valAccuracy (not 'value'). */
export function isValidationField(name: string): boolean {
  return /^val[A-Z]/.test(name);
}

/** Log fields that count things rather than measure the model. */
export const BOOKKEEPING_FIELDS: ReadonlySet<string> = new Set([
  'epoch',
  'globalStep',
  'steps',
  'optimizerSteps',
  'skippedSteps',
  'samples',
  'seconds',
]);

/** { accuracy: 0.9 } -> { valAccuracy: 0.9 }, for the logs of an evaluation during fit. */
export function prefixedWithVal(logs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(logs).map(([name, value]) => [`val${name.charAt(0).toUpperCase()}${name.slice(1)}`, value]),
  );
}

const CLASSIFICATION_METRICS = [
  'accuracy',
  'precisionMacro',
  'recallMacro',
  'f1Macro',
  'precisionMicro',
  'recallMicro',
  'f1Micro',
  'precisionWeighted',
  'recallWeighted',
  'f1Weighted',
  'classificationReport',
  'confusionMatrix',
];
const REGRESSION_METRICS = ['mse', 'mae', 'r2'];
const TOP_K = /^top[1-9][0-9]*Accuracy$/;

/** Losses whose targets are class indices, which classification metrics need. */
export const CLASS_INDEX_LOSSES: ReadonlySet<string> = new Set(['cross_entropy', 'nll']);

/** An error unless every metric is known and fits the loss (`lossName`, or none for a model's own step). */
export function checkMetrics(names: readonly string[], lossName: string | undefined): void {
  const classIndex = lossName !== undefined && CLASS_INDEX_LOSSES.has(lossName);
  for (const name of names) {
    const classification = TOP_K.test(name) || CLASSIFICATION_METRICS.includes(name);
    if (!classification && !REGRESSION_METRICS.includes(name) && name !== 'perplexity') {
      const known = [...CLASSIFICATION_METRICS, 'top5Accuracy', ...REGRESSION_METRICS, 'perplexity'];
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `metrics: unknown metric '${name}'${didYouMean(name, known)}; known metrics: ${known.join(' ')} (top<k>Accuracy for any k)`,
      );
    }
    if (classification && !classIndex) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `metrics: '${name}' needs a class-index loss (cross_entropy, nll)`,
      );
    }
    if (REGRESSION_METRICS.includes(name) && classIndex) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `metrics: '${name}' needs a regression loss (mse, l1, huber, ...)`,
      );
    }
  }
}
