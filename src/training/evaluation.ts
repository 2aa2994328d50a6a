// Evaluation over a dataset or a stream (trainer.evaluate, and a fit's
// validation), and the native form of training data: a dataset's handle, or
// a queue the stream's epoch feeds.
import { Dataset } from '../data/dataset';
import { StreamingDataset } from '../data/streaming-dataset';
import { firebrandError } from '../errors';
import type { NativeBatchQueue, NativeDataset, NativeEngine } from '../native';
import type { TrainerView } from './callbacks';
import type { TrainingData } from './fit-options';
import type { HookRunner } from './hook-runner';
import type { EvalLogs } from './logs';

/** Loss and metrics over `data` in eval mode, with the evaluation hooks (trainer.evaluate and validation). */
export function evaluateOn(
  trainer: TrainerView,
  engine: NativeEngine,
  hooks: HookRunner,
  data: TrainingData,
  epoch: number,
  batchSize: number,
  distributed = true,
): Promise<EvalLogs> {
  if (typeof distributed !== 'boolean') {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'evaluate options: distributed must be true or false');
  }
  return hooks
    .settle(
      withNativeData(data, epoch, (native) =>
        engine.evaluate(native, batchSize, {
          epoch,
          onReport: (report) => hooks.observe('onEvalProgress', report, trainer),
          onBatch: hooks.batchHook('val'),
          distributed,
        }),
      ),
      // C++ adds the metrics config.metrics asked for, which MetricLogs names.
    )
    .then((result) => result as EvalLogs);
}

/** `data` as a Dataset, or an error naming `field`. */
export function dataHandle(data: unknown, field: string): Dataset {
  if (!(data instanceof Dataset)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `${field} must be a Dataset (Dataset.fromIdx, fromArrays, ...) or a StreamingDataset`,
    );
  }
  return data;
}

/** Runs `body` on the native form of `data`: a dataset handle, or a queue fed by the stream's epoch. */
export async function withNativeData<Result>(
  data: TrainingData,
  epoch: number,
  body: (native: NativeDataset | NativeBatchQueue) => Promise<Result>,
): Promise<Result> {
  if (data instanceof StreamingDataset) return data.stream(epoch, body);
  return body(dataHandle(data, 'data').native);
}
