// exportOnnx's options and their defaults: the example forward is traced on,
// the opset, and which axes stay dynamic; then the file, written whole.
import { firebrandError } from '../errors';
import type { NativeOnnxOptions, NumericArray, TensorData } from '../native';
import type { ModelPreprocessing } from '../preprocessing/model-preprocessing';
import { encodeOnnxModel, writeWhole } from './onnx-file';
import type { ImageTransformSpec } from '../images/image-transforms';
import { randomTransformsOf } from '../images/image-pipeline';
import type { SavedTablePreprocessor } from '../preprocessing/table-preprocessor';
import type { OnnxGraph } from '../onnx-graph';
import { withTablePreprocessing } from './table-onnx';
import { withClassOutputs } from './class-outputs-onnx';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';

/** Zeros of a shape, as an example input. */
export interface ExampleShape {
  shape: number[];
  /** Default 'float32'. */
  dtype?: 'float32' | 'float64' | 'int64' | 'int32' | 'uint8';
}

export type ExampleInput = TensorData<NumericArray> | ExampleShape;

export interface ExportOnnxOptions {
  /**
   * What forward is traced on, once, in eval mode: one tensor (`{ data, shape }`, or zeros of
   * `{ shape, dtype }`), or a model's inputs by field name. Only dtypes and ranks are kept: sizes on
   * dynamic axes are free. Default: for a model trained on images or a table, two samples as its
   * preprocessing makes them; otherwise required.
   */
  example?: ExampleInput | Record<string, ExampleInput>;
  /** ONNX opset: 17 (default, LayerNormalization's first) or 18. */
  opset?: number;
  /**
   * Labels of the axes whose size may change, by input or output name: `{ input: { 0: 'batch' } }`.
   * Default: every input's axis 0 ('batch'), and axis 1 ('sequence') of integer inputs of 2 or more
   * dims (token ids). Output axes are left unknown unless named here.
   */
  dynamicAxes?: Record<string, Record<number, string>>;
  /**
   * Fold the saved preprocessing into the graph. Images: the file takes raw uint8 images [N, C, H, W]
   * as decoded (Dataset.fromIdx's scaling and normalization, an image dataset's toTensor / toDtype /
   * normalize); transforms ONNX cannot reproduce exactly (resize, crops, colour conversions) are
   * refused, naming them. Tables: the file takes the raw columns, one input each, as predict takes
   * records (numbers as float64 with NaN for missing, text as strings with '' for missing). Default
   * false: the file takes what the model takes.
   */
  includePreprocessing?: boolean;
  /**
   * A classifier's answers as outputs too, beside its logits: `probabilities` (float32 [batch, classes],
   * softmax, as predictProba) and `label` ([batch]: the class names the model was saved with, as strings
   * or numbers, else class indices, as predictLabels). Default false.
   */
  classOutputs?: boolean;
}

export const ONNX_OPSETS = [17, 18];

const DTYPES = {
  float32: Float32Array,
  float64: Float64Array,
  int64: BigInt64Array,
  int32: Int32Array,
  uint8: Uint8Array,
} as const;

function isExampleInput(value: unknown): value is ExampleInput {
  return typeof value === 'object' && value !== null && Array.isArray((value as { shape?: unknown }).shape);
}

function tensorOf(given: ExampleInput, field: string): TensorData<NumericArray> {
  if ('data' in given) return given;
  const dtype = given.dtype ?? 'float32';
  const Kind = DTYPES[dtype];
  if (Kind === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `exportOnnx: ${field}.dtype must be one of ${Object.keys(DTYPES).join(', ')}, got '${String(dtype)}'`,
    );
  }
  const size = given.shape.reduce((product, dim) => product * dim, 1);
  return { data: new Kind(size), shape: given.shape };
}

/** Two samples of what the model was trained on, as its saved preprocessing makes them. */
function preprocessedExample(preprocessing: ModelPreprocessing | undefined): Record<string, TensorData<NumericArray>> {
  const sampleShape = preprocessing?.imagePipeline?.sampleShape;
  if (sampleShape !== undefined) return { input: tensorOf({ shape: [2, ...sampleShape] }, 'example') };
  const table = preprocessing?.tablePreprocessor;
  if (table !== undefined) {
    // Zeros of the fields' shapes: records would need every column imputable.
    const { input, categories } = table.featureNames;
    return {
      ...(input ? { input: { data: new Float32Array(2 * input.length), shape: [2, input.length] } } : {}),
      ...(categories
        ? { categories: { data: new BigInt64Array(2 * categories.length), shape: [2, categories.length] } }
        : {}),
    };
  }
  throw firebrandError(
    'ERR_FIREBRAND_INVALID_ARGUMENT',
    'exportOnnx: give options.example, what forward is traced on: { shape: [2, 1, 28, 28] } (zeros), ' +
      '{ data, shape }, or the inputs by name; only a model trained on images or a table has a default',
  );
}

/** The saved image transforms an export takes raw images through. */
function foldedTransforms(
  preprocessing: ModelPreprocessing | undefined,
  example: Record<string, TensorData<NumericArray>>,
): ImageTransformSpec[] {
  const pipeline = preprocessing?.imagePipeline;
  if (pipeline === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'exportOnnx: includePreprocessing needs a model trained on images (Dataset.fromIdx, fromImageFolder) or a ' +
        'table (Dataset.fromTable), whose preprocessing was saved; this one has none',
    );
  }
  const random = randomTransformsOf(pipeline);
  if (random.length > 0) {
    throw firebrandError(
      'ERR_FIREBRAND_NOT_EXPORTABLE',
      `exportOnnx: the saved image transforms include random ones (${random.join(', ')}); fit with evalData of ` +
        'images, whose transforms are saved for serving',
    );
  }
  const shapes = Object.values(example).map((tensor) => tensor.shape);
  if (shapes.length !== 1 || shapes[0].length !== 4) {
    throw firebrandError(
      'ERR_FIREBRAND_NOT_EXPORTABLE',
      `exportOnnx: includePreprocessing folds image transforms into a model taking images [N, C, H, W]; this one ` +
        `takes ${shapes.map((shape) => `[${shape.join(', ')}]`).join(', ')}`,
    );
  }
  return pipeline.transforms;
}

const EXPORT_ONNX_OPTION_KEYS = optionKeys<ExportOnnxOptions>()([
  'example',
  'opset',
  'dynamicAxes',
  'includePreprocessing',
  'classOutputs',
]);

/** The example by input field, and the native options with every default resolved. */
export function resolveOnnxExport(
  options: ExportOnnxOptions,
  inputFields: string[],
  preprocessing: ModelPreprocessing | undefined,
): { example: Record<string, TensorData<NumericArray>>; native: NativeOnnxOptions; table?: SavedTablePreprocessor } {
  refuseUnknownKeys(options, EXPORT_ONNX_OPTION_KEYS, 'exportOnnx options');
  const opset = options.opset ?? 17;
  if (options.classOutputs !== undefined && typeof options.classOutputs !== 'boolean') {
    throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'exportOnnx: classOutputs must be true or false');
  }
  if (!ONNX_OPSETS.includes(opset)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `exportOnnx: opset must be one of ${ONNX_OPSETS.join(', ')}, got ${String(opset)}`,
    );
  }
  let example: Record<string, TensorData<NumericArray>>;
  if (options.example === undefined) {
    example = preprocessedExample(preprocessing);
  } else if (isExampleInput(options.example)) {
    example = { [inputFields[0] ?? 'input']: tensorOf(options.example, 'example') };
  } else {
    example = Object.fromEntries(
      Object.entries(options.example).map(([name, given]) => [name, tensorOf(given, `example.${name}`)]),
    );
  }
  if (Object.keys(example).length === 1 && inputFields.length === 1) {
    example = { [inputFields[0]]: Object.values(example)[0] };
  }
  if (options.includePreprocessing === true && preprocessing?.imagePipeline !== undefined) {
    // The file takes raw uint8 pixels, and an example of them is what a user has at hand; the model itself
    // is traced on what the folded transforms make of them (the same shape: resizes cannot be folded).
    example = Object.fromEntries(
      Object.entries(example).map(([name, tensor]) => [
        name,
        tensor.data instanceof Uint8Array
          ? { data: new Float32Array(tensor.data.length), shape: tensor.shape }
          : tensor,
      ]),
    );
  }
  const dynamicAxes: Record<string, Record<number, string>> = {};
  for (const [name, tensor] of Object.entries(example)) {
    const integral = !(tensor.data instanceof Float32Array || tensor.data instanceof Float64Array);
    const axes: Record<number, string> = { 0: 'batch' };
    if (integral && tensor.shape.length >= 2) axes[1] = 'sequence';
    dynamicAxes[name] = axes;
  }
  const native: NativeOnnxOptions = { opset, dynamicAxes: { ...dynamicAxes, ...(options.dynamicAxes ?? {}) } };
  const table = preprocessing?.tablePreprocessor;
  if (options.includePreprocessing === true && table !== undefined) return { example, native, table: table.toJSON() };
  if (options.includePreprocessing === true) native.imageTransforms = foldedTransforms(preprocessing, example);
  return { example, native };
}

/** Encodes the native graph (behind the table's preprocessing, if given) and writes it to `file` (no partial file on failure). */
export async function writeOnnxFile(
  file: string,
  graph: OnnxGraph,
  graphName: string,
  table?: SavedTablePreprocessor,
  classes?: { names: (string | number)[] | undefined },
): Promise<void> {
  const preprocessed = table === undefined ? graph : withTablePreprocessing(graph, table);
  const whole = classes === undefined ? preprocessed : withClassOutputs(preprocessed, classes.names);
  const bytes = encodeOnnxModel(whole, graphName);
  await writeWhole(file, bytes).catch((error: Error) => {
    throw firebrandError('ERR_FIREBRAND_FILE', `exportOnnx: cannot write ${file} (${error.message})`);
  });
}
