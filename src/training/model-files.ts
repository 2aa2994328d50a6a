// What a trainer writes of its model for others to load: trainer.save's folder
// (Model.load reads it) and savePretrained's Hugging Face checkpoint folder,
// and the preprocessing a fit adopts from its data to save beside the model.
import path from 'node:path';

import { firebrandError } from '../errors';
import type { GenerationDefaults } from '../inference/generation-defaults';
import { TORCHSCRIPT_FILE, WEIGHTS_FILE, writeSavedModel } from '../inference/saved-model';
import type { ModelSpec } from '../nn/model-spec';
import { modelDtype } from '../nn/module/tracer';
import { isHuggingFaceSource, type PretrainedSource } from '../pretrained/from-pretrained';
import { writePretrained } from '../pretrained/save-pretrained';
import { ModelPreprocessing } from '../preprocessing/model-preprocessing';
import type { TrainingData } from './fit-options';

/** The trained model as its files need it. */
export interface TrainedModel {
  spec: ModelSpec;
  evalBatchSize: number;
  preprocessing: ModelPreprocessing | undefined;
  /** LoRA adapters not merged into the weights (which a saved model does not rebuild). */
  unmergedAdapters: boolean;
  pretrained: PretrainedSource | undefined;
  /** generate's defaults, which the saved folder keeps. */
  generation: GenerationDefaults | undefined;
  saveWeights(file: string): Promise<void>;
  exportTorchScript(file: string): Promise<void>;
}

const MERGE_FIRST = 'merge them first (mergeAdapter) or save them alone (saveAdapter)';

/** trainer.save: model.safetensors, the spec to rebuild it, the preprocessing, and model.pt for TorchScript. */
export function writeModelFolder(folder: string, model: TrainedModel): Promise<void> {
  if (model.unmergedAdapters) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_STATE',
      `save(${folder}): the model has LoRA adapters, which a saved model does not rebuild; ${MERGE_FIRST}`,
    );
  }
  const described = { spec: model.spec, predictBatchSize: model.evalBatchSize, generation: model.generation };
  return writeSavedModel(folder, described, async (temporary) => {
    await model.saveWeights(path.join(temporary, WEIGHTS_FILE));
    model.preprocessing?.write(temporary);
    if (model.spec.type === 'torchscript') await model.exportTorchScript(path.join(temporary, TORCHSCRIPT_FILE));
  });
}

/** savePretrained: the fromPretrained checkpoint's folder again, with the trained weights. */
export async function writePretrainedFolder(folder: string, model: TrainedModel): Promise<void> {
  const source = model.pretrained;
  if (source === undefined || !isHuggingFaceSource(source)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_STATE',
      `savePretrained(${folder}): the model was not made by fromPretrained, so there is no config.json to write; use save()`,
    );
  }
  if (model.unmergedAdapters) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_STATE',
      `savePretrained(${folder}): the model has LoRA adapters; ${MERGE_FIRST}`,
    );
  }
  await writePretrained(folder, source, modelDtype(model.spec), (file) => model.saveWeights(file));
}

/**
 * The preprocessing a fit on `data` (evaluated on `evalData`) saves with the model; another than `current`,
 * which an earlier fit took, is an error. Images are served as the evaluation data's were transformed (no
 * random crops or flips), so an image dataset in evalData gives its pipeline, with the training images' classes.
 */
export function adoptedPreprocessing(
  current: ModelPreprocessing | undefined,
  data: TrainingData,
  evalData: TrainingData | undefined,
): ModelPreprocessing | undefined {
  const preprocessingOf = (source: TrainingData | undefined) =>
    (source as { preprocessing?: ModelPreprocessing } | undefined)?.preprocessing;
  const training = preprocessingOf(data);
  const evaluation = preprocessingOf(evalData)?.imagePipeline;
  // The evaluation images' shape, when their transforms end at one size: predict checks floats against it
  // and exportOnnx's example defaults to it.
  const shape = (evalData as { sampleShape?: number[] } | undefined)?.sampleShape;
  const fixedShape = shape !== undefined && shape.every((size) => size > 0) ? { sampleShape: shape } : {};
  const given =
    training?.imagePipeline !== undefined && evaluation !== undefined
      ? ModelPreprocessing.ofImages({
          ...fixedShape,
          ...evaluation,
          classes: training.imagePipeline.classes ?? evaluation.classes,
        })
      : training;
  if (given === undefined) return current;
  if (current !== undefined && !current.sameAs(given)) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'fit: this dataset was preprocessed otherwise than the one an earlier fit trained on (another TablePreprocessor, ' +
        'one fitted on other rows, or other image transforms); preprocess every part as the training data was',
    );
  }
  return given;
}
