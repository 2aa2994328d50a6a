// predict's call shapes, shared by Trainer and Model: one tensor
// (`predict(data, shape)`), the named inputs of a module whose forward takes
// several (`predict({ input_ids, attention_mask })`, by inputFields()), a
// table's JSON records, preprocessed as the model's training rows were, or
// encoded images (Buffers of JPEG, PNG or WebP bytes), decoded and transformed
// as its evaluation images were; a model trained on images (fromImageFolder,
// fromIdx) also transforms raw uint8 pixels so, while floats are taken as
// already preprocessed.
import { firebrandError } from '../errors';
import type { NumericArray, TensorData, TensorFields } from '../native';
import { checkTransformedImages, imageBatch, MAX_IMAGE_PIXELS, pixelBatch } from '../images/image-pipeline';
import { recordInputs, type ModelPreprocessing } from '../preprocessing/model-preprocessing';
import type { UnknownCategoryListener } from '../preprocessing/categorical-columns';
import type { TableRecord } from '../tables/table';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';

/** @deprecated The same type as TensorFields, by its earlier name. */
export type PredictionFields = TensorFields;

/** Encoded image files as a service receives them: one Buffer (a batch of one) or several. */
export type EncodedImages = Uint8Array | Uint8Array[];

export interface PredictOptions {
  /** Samples per forward (default: the trainer's evalBatchSize; for Model, that of the trainer that saved it). */
  batchSize?: number;
  /**
   * Run the graph lowered for inference (default true), as torch.jit.optimize_for_inference and
   * onnxruntime's graph optimizations do: a Conv2d read only by a BatchNorm2d runs as one convolution
   * with the BatchNorm folded in, and the ReLU, Hardswish, Hardsigmoid, GELU or SiLU that alone reads it (or the
   * Conv2d) runs inside it; each in float32 with its weight packed once in oneDNN's layout, and Conv2d
   * layers pass channels-last activations to one another. float32 linear layers run as oneDNN 3 matmuls with
   * their weight packed once and the GELU, SiLU or ReLU that alone reads them inside (where libtorch links
   * oneDNN 3; else on oneDNN's sgemm), and LayerNorm layers run firebrand's row kernel where the CPU has AVX-512.
   * Max pools and a squeeze-and-excitation block's pooling and per-channel product run on firebrand's kernels,
   * a residual sum after a convolution runs inside it (with the ReLU after the sum), and the whole
   * forward under libtorch's inference mode (torch.inference_mode: no autograd bookkeeping per op). Results match the layers run one by one to float32 rounding (about
   * 1e-6); false runs them one by one, bit for bit as PyTorch eager does.
   */
  optimizeForInference?: boolean;
  /**
   * Records' fields outside the model's columns: 'error' (the default, so that a misspelt field is caught)
   * or 'ignore' (request ids, the target column: left out).
   */
  extraFields?: 'error' | 'ignore';
}

const PREDICT_OPTION_KEYS = optionKeys<PredictOptions>()(['batchSize', 'optimizeForInference', 'extraFields']);

function isEncodedImages(inputs: unknown[]): inputs is Uint8Array[] {
  return inputs.length > 0 && inputs.every((item) => item instanceof Uint8Array);
}

/** The batch of encoded images, decoded as the model's evaluation images were. */
function imageInputs(
  preprocessing: ModelPreprocessing | undefined,
  images: Uint8Array[],
  maxPixels: number,
): Promise<TensorData<NumericArray>> {
  const pipeline = preprocessing?.imagePipeline;
  if (pipeline === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'predict: got encoded images (Buffers without a shape), but the model was not trained on an image dataset ' +
        '(Dataset.fromImageFolder saves how images are decoded and transformed); give raw values with their shape: predict(data, shape)',
    );
  }
  return imageBatch(pipeline, images, maxPixels);
}

/** What the native predict takes: the inputs, their shape (undefined for named fields) and the options. */
export async function predictionArguments(
  inputs: NumericArray | TensorFields | TableRecord[] | EncodedImages,
  shapeOrOptions: number[] | PredictOptions | undefined,
  options: PredictOptions | undefined,
  preprocessing: ModelPreprocessing | undefined,
  maxPixels = MAX_IMAGE_PIXELS,
  onUnknownCategory?: UnknownCategoryListener,
): Promise<[NumericArray | TensorFields, number[] | undefined, PredictOptions]> {
  refuseUnknownKeys(Array.isArray(shapeOrOptions) ? options : shapeOrOptions, PREDICT_OPTION_KEYS, 'predict options');
  const images = inputs instanceof Uint8Array && !Array.isArray(shapeOrOptions) ? [inputs] : inputs;
  if (Array.isArray(images)) {
    if (images.length === 0) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'predict: got an empty array; give at least one sample (records, encoded images, or values with their shape)',
      );
    }
    const given = (shapeOrOptions as PredictOptions | undefined) ?? {};
    if (isEncodedImages(images)) {
      const batch = await imageInputs(preprocessing, images, maxPixels);
      return [batch.data, batch.shape, given];
    }
    const fields = recordInputs(preprocessing, images as TableRecord[], {
      extraFields: given.extraFields,
      onUnknownCategory,
    });
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
  if (pipeline !== undefined && Array.isArray(shapeOrOptions))
    checkTransformedImages(pipeline, inputs as NumericArray, shapeOrOptions);
  return Array.isArray(shapeOrOptions)
    ? [inputs as NumericArray, shapeOrOptions, options ?? {}]
    : [inputs as NumericArray | TensorFields, undefined, shapeOrOptions ?? {}];
}
