// A trained model loaded for inference (Model.load): predictions in C++ on a
// worker thread, no loss or optimizer.
import path from 'node:path';

import { GenerateOptions, native, NativeModel, NumericArray, Prediction, TensorData } from '../native';
import { generateTokens } from './generation';
import {
  predictionArguments,
  type EncodedImages,
  type PredictionFields,
  type PredictOptions,
} from './prediction-inputs';
import { modelInputFields, resolveModelSpec } from '../nn/model-spec';
import { type ExportOnnxOptions, resolveOnnxExport, writeOnnxFile } from '../export/export-onnx';
import { readSavedModel, WEIGHTS_FILE } from './saved-model';
import { ModelPreprocessing } from '../preprocessing/model-preprocessing';
import type { TableRecord } from '../tables/table';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';
import { MAX_IMAGE_PIXELS } from '../preprocessing/image-preprocessing';
import { firebrandError } from '../errors';

export interface ModelLoadOptions {
  /** 'cpu' (default), 'cuda', 'cuda:<i>', 'mps'. */
  device?: string;
  /** predict(encoded images): a file saying more pixels is refused before they are allocated. Default MAX_IMAGE_PIXELS; 0: any. */
  maxPixels?: number;
}

const LOAD_OPTION_KEYS = optionKeys<ModelLoadOptions>()(['device', 'maxPixels']);

export class Model {
  private constructor(
    private readonly native: NativeModel,
    private readonly inputFields: string[],
    /** How the model's training rows were preprocessed (preprocessing.json), which predict applies to records. */
    readonly preprocessing: ModelPreprocessing | undefined,
    /** Samples per forward unless predict is told otherwise: the saving trainer's evalBatchSize. */
    readonly predictBatchSize: number,
    private readonly maxPixels: number,
  ) {}

  /** Loads what trainer.save(folder) wrote. A TorchScript model runs code from the folder: load trusted folders only. */
  static async load(folder: string, options: ModelLoadOptions = {}): Promise<Model> {
    refuseUnknownKeys(options, LOAD_OPTION_KEYS, 'Model.load options');
    const { spec, predictBatchSize } = readSavedModel(folder);
    const resolved = resolveModelSpec(spec);
    const model = new native.NativeModel(resolved, options.device ?? 'cpu');
    await model.loadWeights(path.join(folder, WEIGHTS_FILE), true);
    const maxPixels = options.maxPixels ?? MAX_IMAGE_PIXELS;
    if (!Number.isInteger(maxPixels) || maxPixels < 0) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `Model.load: maxPixels must be a whole number >= 0 (0: any size), got ${String(maxPixels)}`,
      );
    }
    const preprocessing = ModelPreprocessing.read(folder);
    return new Model(model, modelInputFields(resolved), preprocessing, predictBatchSize, maxPixels);
  }

  get parameterCount(): number {
    return this.native.parameterCount;
  }

  get device(): string {
    return this.native.device;
  }

  /**
   * Outputs for `inputs` of the given full shape (samples first), in eval mode, as float32; a module
   * that takes several inputs (inputFields) gets them by name: `predict({ input_ids, attention_mask })`.
   * A model trained on a table (Dataset.fromTable, fromCsv) takes JSON records, missing fields included:
   * `predict([{ age: 31, port: 'S' }])`, preprocessed as its training rows were.
   * Calls may overlap (a service's concurrent requests): they run one after another, in call order. A
   * module whose forward returns several tensors gets them all, as it returned them (see Trainer.predict).
   */
  async predict(inputs: NumericArray, shape: number[], options?: PredictOptions): Promise<TensorData>;
  async predict<Output extends Prediction>(
    inputs: NumericArray,
    shape: number[],
    options?: PredictOptions,
  ): Promise<Output>;
  async predict(fields: PredictionFields, options?: PredictOptions): Promise<TensorData>;
  async predict<Output extends Prediction>(fields: PredictionFields, options?: PredictOptions): Promise<Output>;
  async predict(records: TableRecord[], options?: PredictOptions): Promise<TensorData>;
  async predict(images: EncodedImages, options?: PredictOptions): Promise<TensorData>;
  async predict(
    inputs: NumericArray | PredictionFields | TableRecord[] | EncodedImages,
    shapeOrOptions?: number[] | PredictOptions,
    options?: PredictOptions,
  ): Promise<Prediction> {
    const [given, shape, { batchSize }] = await predictionArguments(
      inputs,
      shapeOrOptions,
      options,
      this.preprocessing,
      this.maxPixels,
    );
    return this.native.predict(given, shape, batchSize ?? this.predictBatchSize);
  }

  /** Writes the model as an ONNX file, as Trainer.exportOnnx does. */
  async exportOnnx(file: string, options: ExportOnnxOptions = {}): Promise<void> {
    const { example, native, table } = resolveOnnxExport(options, this.inputFields, this.preprocessing);
    await writeOnnxFile(file, await this.native.exportOnnx(example, native), 'firebrand', table);
  }

  /** Samples tokens after `prompt` in C++, as Trainer.generate does. */
  generate(
    prompt: ArrayLike<number> | NumericArray,
    options: GenerateOptions,
  ): AsyncGenerator<number, void, undefined> {
    return generateTokens(this.native, prompt, options);
  }
}
