// predict's call shapes, shared by Trainer and Model: one tensor
// (`predict(data, shape)`), the named inputs of a module whose forward takes
// several (`predict({ input_ids, attention_mask })`, by inputFields()), a
// table's JSON records, preprocessed as the model's training rows were, or
// encoded images (Buffers of JPEG, PNG or WebP bytes), decoded and transformed
// as its evaluation images were; a model trained on images (fromImageFolder,
// fromIdx) also transforms raw uint8 pixels so, while floats are taken as
// already preprocessed.
import { firebrandError } from '../errors';
import type { NumericArray, TensorData } from '../native';
import { imageBatch, pixelBatch } from '../preprocessing/image-preprocessing';
import { recordInputs, type ModelPreprocessing } from '../preprocessing/model-preprocessing';
import type { TableRecord } from '../tables/table';

/** A model's inputs by field name (Module.inputFields), each samples first. */
export type PredictionFields = Record<string, TensorData<NumericArray>>;

/** Encoded image files as a service receives them: one Buffer (a batch of one) or several. */
export type EncodedImages = Uint8Array | Uint8Array[];

export interface PredictOptions {
  /** Samples per forward (default: the trainer's evalBatchSize; 256 for Model). */
  batchSize?: number;
}

function isEncodedImages(inputs: unknown[]): inputs is Uint8Array[] {
  return inputs.length > 0 && inputs.every((item) => item instanceof Uint8Array);
}

/** The batch of encoded images, decoded as the model's evaluation images were. */
function imageInputs(
  preprocessing: ModelPreprocessing | undefined,
  images: Uint8Array[],
): Promise<TensorData<NumericArray>> {
  const pipeline = preprocessing?.imagePipeline;
  if (pipeline === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'predict: got encoded images (Buffers without a shape), but the model was not trained on an image dataset ' +
        '(Dataset.fromImageFolder saves how images are decoded and transformed); give raw values with their shape: predict(data, shape)',
    );
  }
  return imageBatch(pipeline, images);
}

/** What the native predict takes: the inputs, their shape (undefined for named fields) and the options. */
export async function predictionArguments(
  inputs: NumericArray | PredictionFields | TableRecord[] | EncodedImages,
  shapeOrOptions: number[] | PredictOptions | undefined,
  options: PredictOptions | undefined,
  preprocessing: ModelPreprocessing | undefined,
): Promise<[NumericArray | PredictionFields, number[] | undefined, PredictOptions]> {
  const images = inputs instanceof Uint8Array && !Array.isArray(shapeOrOptions) ? [inputs] : inputs;
  if (Array.isArray(images)) {
    const given = (shapeOrOptions as PredictOptions | undefined) ?? {};
    if (isEncodedImages(images)) {
      const batch = await imageInputs(preprocessing, images);
      return [batch.data, batch.shape, given];
    }
    const fields = recordInputs(preprocessing, images as TableRecord[]);
    const names = Object.keys(fields);
    return names.length === 1 && names[0] === 'input'
      ? [fields.input.data, fields.input.shape, given]
      : [fields, undefined, given];
  }
  const pipeline = preprocessing?.imagePipeline;
  if (pipeline !== undefined && inputs instanceof Uint8Array && Array.isArray(shapeOrOptions)) {
    // Raw pixels of a model trained on images: transformed as its evaluation images were.
    const batch = await pixelBatch(pipeline, { data: inputs, shape: shapeOrOptions });
    return [batch.data, batch.shape, options ?? {}];
  }
  return Array.isArray(shapeOrOptions)
    ? [inputs as NumericArray, shapeOrOptions, options ?? {}]
    : [inputs as NumericArray | PredictionFields, undefined, shapeOrOptions ?? {}];
}
