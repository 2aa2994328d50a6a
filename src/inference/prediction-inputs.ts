// predict's two call shapes, shared by Trainer and Model: one tensor
// (`predict(data, shape)`), or the named inputs of a module whose forward takes
// several (`predict({ input_ids, attention_mask })`, by inputFields()).
import type { NumericArray, TensorData } from '../native';

/** A model's inputs by field name (Module.inputFields), each samples first. */
export type PredictionFields = Record<string, TensorData<NumericArray>>;

export interface PredictOptions {
  /** Samples per forward (default: the trainer's evalBatchSize; 256 for Model). */
  batchSize?: number;
}

/** What the native predict takes: the inputs, their shape (undefined for named fields) and the options. */
export function predictionArguments(
  inputs: NumericArray | PredictionFields,
  shapeOrOptions: number[] | PredictOptions | undefined,
  options: PredictOptions | undefined,
): [NumericArray | PredictionFields, number[] | undefined, PredictOptions] {
  return Array.isArray(shapeOrOptions)
    ? [inputs, shapeOrOptions, options ?? {}]
    : [inputs, undefined, shapeOrOptions ?? {}];
}
