// predict's call shapes, shared by Trainer and Model: one tensor
// (`predict(data, shape)`), the named inputs of a module whose forward takes
// several (`predict({ input_ids, attention_mask })`, by inputFields()), or a
// table's JSON records, preprocessed as the model's training rows were.
import type { NumericArray, TensorData } from '../native';
import { recordInputs, type ModelPreprocessing } from '../preprocessing/model-preprocessing';
import type { TableRecord } from '../tables/table';

/** A model's inputs by field name (Module.inputFields), each samples first. */
export type PredictionFields = Record<string, TensorData<NumericArray>>;

export interface PredictOptions {
  /** Samples per forward (default: the trainer's evalBatchSize; 256 for Model). */
  batchSize?: number;
}

/** What the native predict takes: the inputs, their shape (undefined for named fields) and the options. */
export function predictionArguments(
  inputs: NumericArray | PredictionFields | TableRecord[],
  shapeOrOptions: number[] | PredictOptions | undefined,
  options: PredictOptions | undefined,
  preprocessing: ModelPreprocessing | undefined,
): [NumericArray | PredictionFields, number[] | undefined, PredictOptions] {
  if (Array.isArray(inputs)) {
    const fields = recordInputs(preprocessing, inputs);
    const given = (shapeOrOptions as PredictOptions | undefined) ?? {};
    const names = Object.keys(fields);
    return names.length === 1 && names[0] === 'input'
      ? [fields.input.data, fields.input.shape, given]
      : [fields, undefined, given];
  }
  return Array.isArray(shapeOrOptions)
    ? [inputs, shapeOrOptions, options ?? {}]
    : [inputs, undefined, shapeOrOptions ?? {}];
}
