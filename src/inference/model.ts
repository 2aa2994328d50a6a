// A trained model: predictions, generation, exports and its state dict, run in
// C++ on a thread of its own (Model.load) or on its trainer's (trainer.model,
// between two training steps during a fit). The only implementation of what a
// model does; Trainer's predict, generate and exports are delegates to it.
import path from 'node:path';

import {
  GenerateOptions,
  GenerationStep,
  ModelDescription,
  native,
  NativeModel,
  NumericArray,
  Prediction,
  TensorData,
  TensorFields,
} from '../native';
import { type GenerateTextOptions, generateSteps, generateTokens, scoredSteps, streamText } from './generation';
import type { Tokenizer } from '../text/tokenizer';
import { type GenerationDefaults, withGenerationDefaults } from './generation-defaults';
import { predictionArguments, type EncodedImages, type PredictOptions } from './prediction-inputs';
import { probabilitiesOf, topLabels, type ClassLabel, type ScoredLabel } from './class-predictions';
import { modelInputFields, resolveModelSpec } from '../nn/model-spec';
import { type ExportOnnxOptions, resolveOnnxExport, writeOnnxFile } from '../export/export-onnx';
import { readSavedModel, WEIGHTS_FILE } from './saved-model';
import { ModelPreprocessing } from '../preprocessing/model-preprocessing';
import type { TableRecord } from '../tables/table';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';
import { MAX_IMAGE_PIXELS } from '../images/image-pipeline';
import { firebrandError } from '../errors';

export interface ModelLoadOptions {
  /** 'cpu' (default), 'cuda', 'cuda:<i>', 'mps'. */
  device?: string;
  /** predict(encoded images): a file saying more pixels is refused before they are allocated. Default MAX_IMAGE_PIXELS; 0: any. */
  maxPixels?: number;
}

const LOAD_OPTION_KEYS = optionKeys<ModelLoadOptions>()(['device', 'maxPixels']);

/** @internal What a Model knows besides its native handle: from saved files, or from its trainer as it is now. */
export interface ModelContext {
  /** The forward's inputs by name (Module.inputFields). */
  readonly inputFields: string[];
  /** How the training rows were preprocessed: predict applies it to records, images and raw pixels. */
  preprocessing(): ModelPreprocessing | undefined;
  /** Samples per forward unless predict is told otherwise (the trainer's evalBatchSize). */
  readonly predictBatchSize: number;
  readonly maxPixels: number;
  /** generate's defaults (a Hugging Face checkpoint's generation config). */
  readonly generation?: GenerationDefaults;
}

/** What predict takes: values with their shape, named fields, a table's records or encoded images. */
export type PredictionInputs = NumericArray | TensorFields | TableRecord[] | EncodedImages;

/** predictLabels' options: predict's, and how many classes each sample gets (topK). */
export type LabelOptions = PredictOptions & { topK?: number };

export class Model {
  private warnedUnapplied = false;
  private readonly unknownCounts = new Map<string, Map<string, number>>();

  /** @internal Model.load makes one; trainer.model hands out its trainer's. */
  constructor(
    private readonly native: NativeModel,
    private readonly context: ModelContext,
  ) {}

  /** Loads what trainer.save(folder) wrote. A TorchScript model runs code from the folder: load trusted folders only. */
  static async load(folder: string, options: ModelLoadOptions = {}): Promise<Model> {
    refuseUnknownKeys(options, LOAD_OPTION_KEYS, 'Model.load options');
    const maxPixels = options.maxPixels ?? MAX_IMAGE_PIXELS;
    if (!Number.isInteger(maxPixels) || maxPixels < 0) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `Model.load: maxPixels must be a whole number >= 0 (0: any size), got ${String(maxPixels)}`,
      );
    }
    const { spec, predictBatchSize, generation } = readSavedModel(folder);
    const resolved = resolveModelSpec(spec);
    const model = new native.NativeModel(resolved, options.device ?? 'cpu');
    await model.loadWeights(path.join(folder, WEIGHTS_FILE), true);
    const preprocessing = ModelPreprocessing.read(folder);
    return new Model(model, {
      inputFields: modelInputFields(resolved),
      preprocessing: () => preprocessing,
      predictBatchSize,
      maxPixels,
      generation,
    });
  }

  /** How the model's training rows were preprocessed (preprocessing.json), which predict applies. */
  get preprocessing(): ModelPreprocessing | undefined {
    return this.context.preprocessing();
  }

  /** generate's defaults: a Hugging Face checkpoint's generation config, and what of it generate does not apply. */
  get generationDefaults(): GenerationDefaults | undefined {
    return this.context.generation;
  }

  /** The forward's inputs by name ('input_ids', 'attention_mask'): what predict takes as fields. */
  get inputFields(): string[] {
    return [...this.context.inputFields];
  }

  /** Samples per forward unless predict is told otherwise: the (saving) trainer's evalBatchSize. */
  get predictBatchSize(): number {
    return this.context.predictBatchSize;
  }

  /** The model's parameters by PyTorch state-dict name, in state-dict order, with shape, dtype and requiresGrad. */
  get namedParameters(): ModelDescription['parameters'] {
    return this.native.description.parameters;
  }

  /** The model's buffers (BatchNorm's running_mean, running_var, num_batches_tracked) by PyTorch name. */
  get namedBuffers(): ModelDescription['buffers'] {
    return this.native.description.buffers;
  }

  /** Elements in all parameters, as `sum(p.numel() for p in model.parameters())`. */
  get parameterCount(): number {
    return this.native.parameterCount;
  }

  get device(): string {
    return this.native.device;
  }

  /**
   * Outputs for `inputs` of the given full shape (samples first), in eval mode, without gradients, as
   * float32; a module that takes several inputs (inputFields) gets them by name: `predict({ input_ids,
   * attention_mask })`. A model trained on a table (Dataset.fromTable, fromCsv) takes JSON records,
   * missing fields included: `predict([{ age: 31, port: 'S' }])`, preprocessed as its training rows were;
   * one trained on images takes encoded files (Buffers) or raw uint8 pixels, transformed as its
   * evaluation images were. Calls may overlap (a service's concurrent requests): they run one after
   * another, in call order; a trainer's model answers between two optimizer steps during fit, leaving the
   * run exactly as it would be without them. A module whose forward returns several tensors gets them
   * all, as it returned them: name that shape, `predict<TensorData[]>(...)` or
   * `predict<Record<'logits' | 'features', TensorData>>(...)`.
   */
  async predict(inputs: NumericArray, shape: number[], options?: PredictOptions): Promise<TensorData>;
  async predict<Output extends Prediction>(
    inputs: NumericArray,
    shape: number[],
    options?: PredictOptions,
  ): Promise<Output>;
  async predict(fields: TensorFields, options?: PredictOptions): Promise<TensorData>;
  async predict<Output extends Prediction>(fields: TensorFields, options?: PredictOptions): Promise<Output>;
  async predict(records: TableRecord[], options?: PredictOptions): Promise<TensorData>;
  async predict(images: EncodedImages, options?: PredictOptions): Promise<TensorData>;
  async predict(
    inputs: NumericArray | TensorFields | TableRecord[] | EncodedImages,
    shapeOrOptions?: number[] | PredictOptions,
    options?: PredictOptions,
  ): Promise<Prediction> {
    const [given, shape, { batchSize, optimizeForInference = true }] = await predictionArguments(
      inputs,
      shapeOrOptions,
      options,
      this.context.preprocessing(),
      this.context.maxPixels,
      (column, value) => this.countUnknown(column, value),
    );
    if (typeof optimizeForInference !== 'boolean') {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        `predict options: optimizeForInference must be true or false, got ${JSON.stringify(optimizeForInference)}`,
      );
    }
    const output = await this.native.predict(
      given,
      shape,
      batchSize ?? this.context.predictBatchSize,
      optimizeForInference,
    );
    const preprocessing = this.context.preprocessing();
    return preprocessing === undefined ? output : preprocessing.unscaled(output);
  }

  /**
   * The classes a classifier's outputs stand for, in index order: a table target's (LabelEncoder's
   * classes_) or an image folder's; undefined when the model was trained on class indices.
   */
  get classes(): ClassLabel[] | undefined {
    const preprocessing = this.context.preprocessing();
    return (
      preprocessing?.tablePreprocessor?.classes?.map((label) => label ?? 'null') ??
      preprocessing?.imagePipeline?.classes
    );
  }

  /**
   * Class probabilities for predict's inputs (any of its forms), as scikit-learn's predict_proba gives
   * them: softmax over logits [samples, classes]; a binary classifier's one logit a sample as [P(0), P(1)].
   */
  async predictProba(
    inputs: PredictionInputs,
    shapeOrOptions?: number[] | PredictOptions,
    options?: PredictOptions,
  ): Promise<TensorData<Float32Array>> {
    const logits = await (this.predict as (...args: unknown[]) => Promise<Prediction>)(inputs, shapeOrOptions, options);
    if (Array.isArray(logits) || !('shape' in logits) || !Array.isArray(logits.shape)) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'predictProba: the model returns several outputs; class probabilities need one tensor of logits',
      );
    }
    return probabilitiesOf(logits as TensorData);
  }

  /**
   * Each sample's most probable class, by name (`classes`) or index; with `{ topK }`, its k most probable
   * classes with their probabilities, most probable first.
   */
  async predictLabels(inputs: PredictionInputs, options: LabelOptions & { topK: number }): Promise<ScoredLabel[][]>;
  async predictLabels(
    inputs: NumericArray,
    shape: number[],
    options: LabelOptions & { topK: number },
  ): Promise<ScoredLabel[][]>;
  async predictLabels(
    inputs: PredictionInputs,
    shapeOrOptions?: number[] | LabelOptions,
    options?: LabelOptions,
  ): Promise<ClassLabel[]>;
  async predictLabels(
    inputs: PredictionInputs,
    shapeOrOptions?: number[] | LabelOptions,
    options?: LabelOptions,
  ): Promise<ClassLabel[] | ScoredLabel[][]> {
    const given = Array.isArray(shapeOrOptions) ? options : shapeOrOptions;
    const { topK, ...predictOptions } = given ?? {};
    const probabilities = Array.isArray(shapeOrOptions)
      ? await this.predictProba(inputs, shapeOrOptions, predictOptions)
      : await this.predictProba(inputs, predictOptions);
    const top = topLabels(probabilities, this.classes, topK ?? 1);
    return topK === undefined ? top.map(([best]) => best.label) : top;
  }

  /**
   * The categories predict met that the model's training rows lacked (encoded as none of them, under
   * handleUnknown: 'ignore'), counted by column and value since the model was loaded: log them to watch
   * for drift. `resetUnknownCategories()` starts the counts again.
   */
  get unknownCategories(): Record<string, Record<string, number>> {
    return Object.fromEntries([...this.unknownCounts].map(([column, counts]) => [column, Object.fromEntries(counts)]));
  }

  /** Forgets the unknown categories counted so far. */
  resetUnknownCategories(): void {
    this.unknownCounts.clear();
  }

  private countUnknown(column: string, value: string | number | null): void {
    const counts = this.unknownCounts.get(column) ?? new Map<string, number>();
    const key = String(value);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    this.unknownCounts.set(column, counts);
  }

  /**
   * Samples tokens from a language model (a forward returning [batch, vocabulary, time] logits, as
   * cross_entropy takes them) after `prompt`, in C++: `for await (const token of model.generate(ids,
   * { maxNewTokens: 100, temperature: 0.8, topK: 20, seed: 1 }))`. A seed gives the same tokens. A
   * Hugging Face checkpoint's generation_config.json gives the defaults (greedy unless do_sample, its
   * temperature, top_k, top_p, repetition_penalty, max_new_tokens and eos_token_id), as transformers'
   * generate takes them; options override each.
   */
  generate(
    prompt: ArrayLike<number> | NumericArray,
    options: GenerateOptions = {},
  ): AsyncGenerator<number, void, undefined> {
    return generateTokens(this.native, prompt, this.generateOptions(options));
  }

  /**
   * Samples several prompts together as one batch, left-padded to the longest as transformers pads for
   * generation; yields each step's tokens, one per prompt, null for a prompt that ended at an earlier
   * step (each ends at its own stop token). Prompts of different lengths need a model that takes
   * `{ input_ids, attention_mask }` (`fromPretrained(path, { attentionMask: true })` for the Llama
   * family): padding is left out of attention and each prompt's positions start at its first token.
   */
  generateBatch(
    prompts: (ArrayLike<number> | NumericArray)[],
    options: GenerateOptions = {},
  ): AsyncGenerator<(number | null)[], void, undefined> {
    return generateSteps(this.native, prompts, this.generateOptions(options));
  }

  /**
   * generateBatch with each chosen token's log-probability under the model's raw logits (log_softmax
   * before penalties, temperature and filtering, as vLLM's logprobs and transformers' output_logits give
   * it): each step `{ tokens, logprobs }`, null for a prompt that has ended.
   */
  generateBatchWithLogprobs(
    prompts: (ArrayLike<number> | NumericArray)[],
    options: GenerateOptions = {},
  ): AsyncGenerator<GenerationStep, void, undefined> {
    return scoredSteps(this.native, prompts, this.generateOptions(options), true);
  }

  /**
   * generate as text: `prompt` (text `tokenizer` encodes, or ids: applyChatTemplate's for a chat) continued
   * in pieces that never split a character, as transformers' TextIteratorStreamer streams them; the stop
   * token's text is left out, and the text ends before the first of `stopStrings` (OpenAI's `stop`).
   */
  generateText(
    prompt: string | ArrayLike<number> | NumericArray,
    tokenizer: Tokenizer,
    { stopStrings = [], ...options }: GenerateTextOptions = {},
  ): AsyncGenerator<string, void, undefined> {
    const merged = this.generateOptions(options);
    const ids = typeof prompt === 'string' ? tokenizer.encode(prompt) : prompt;
    return streamText(generateTokens(this.native, ids, merged), tokenizer, merged.stopTokens ?? [], stopStrings);
  }

  /** `options` over the model's generation defaults; warns once of a checkpoint's settings generate does not apply. */
  private generateOptions(options: GenerateOptions): GenerateOptions {
    const unapplied = this.context.generation?.unapplied ?? [];
    if (unapplied.length > 0 && !this.warnedUnapplied) {
      this.warnedUnapplied = true;
      process.emitWarning(
        `generate: the checkpoint's generation_config.json sets ${unapplied.join(', ')}, which firebrand's ` +
          "generate does not apply: its tokens can differ from transformers' generate",
        { code: 'FIREBRAND_GENERATION_CONFIG' },
      );
    }
    return withGenerationDefaults(options, this.context.generation?.options);
  }

  /**
   * Writes the model as an ONNX file (eval mode) that onnxruntime runs in Node, the browser or
   * Python: each op of the traced forward becomes ONNX ops, the weights initializers. `example` is
   * what forward is traced on (its dtypes and ranks; sizes on dynamic axes stay free). An op without an
   * ONNX form is named with its module path, and no file is left behind.
   */
  async exportOnnx(file: string, options: ExportOnnxOptions = {}): Promise<void> {
    const { example, native, table } = resolveOnnxExport(options, this.context.inputFields, this.preprocessing);
    const classes = options.classOutputs === true ? { names: this.classes } : undefined;
    await writeOnnxFile(file, await this.native.exportOnnx(example, native), 'firebrand', table, classes);
  }

  /**
   * Writes the model as a TorchScript module (eval mode) that torch.jit.load runs in Python or C++:
   * a traced model (a module or nn.sequential) becomes aten ops over its weights; a TorchScript model is saved as trained.
   */
  async exportTorchScript(file: string): Promise<void> {
    await this.native.exportTorchScript(file);
  }

  /** Copies of the model's parameters and buffers, by PyTorch state-dict name ('0.weight', 'hidden.bias'). */
  async stateDict(): Promise<Record<string, TensorData<NumericArray>>> {
    return this.native.stateDict();
  }
}
