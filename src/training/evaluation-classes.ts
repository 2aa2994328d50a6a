// Evaluation images labelled as the training images were. ImageFolder indexes
// the classes a folder holds, so a validation folder without some class would
// shift every later label (0.19 accuracy reported for 0.63); the labels follow
// the class names instead. And fit's data, given or configured.
import { firebrandError, type FirebrandErrorCode } from '../errors';
import type { TrainingData } from './fit-options';
import type { DataloaderConfiguration } from './trainer-options';

interface LabelledByClass {
  readonly classes?: string[];
  withClasses(classes: string[]): TrainingData;
}

const labelledByClass = (data: unknown): data is LabelledByClass =>
  typeof (data as LabelledByClass | undefined)?.withClasses === 'function';

/** `evalData` labelled by index in `classes` (the training data's); `where` names it in errors ("fit: evalData"). */
export function withTrainingClasses(
  evalData: TrainingData | undefined,
  classes: string[] | undefined,
  where: string,
): TrainingData | undefined {
  if (classes === undefined || !labelledByClass(evalData)) return evalData;
  const own = evalData.classes;
  if (own === undefined || (own.length === classes.length && own.every((name, i) => name === classes[i]))) {
    return evalData;
  }
  try {
    return evalData.withClasses(classes);
  } catch (error) {
    const { code, message } = error as Error & { code?: string };
    throw firebrandError((code ?? 'ERR_FIREBRAND_DATA') as FirebrandErrorCode, `${where}: ${message}`);
  }
}

/** fit's data: given, or configureDataloaders()'s, the evaluation data labelled by the training data's classes. */
export function fitData(
  trainData: TrainingData | undefined,
  evalData: TrainingData | undefined,
  dataloaders: DataloaderConfiguration,
): { data: TrainingData; evalData: TrainingData | undefined } {
  const data = trainData ?? dataloaders.train;
  if (data === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'fit: give trainData, or return { train } from configureDataloaders()',
    );
  }
  const trainingClasses = (data as { classes?: string[] }).classes;
  return { data, evalData: withTrainingClasses(evalData ?? dataloaders.eval, trainingClasses, 'fit: evalData') };
}

/** evaluate's data: given, or configureDataloaders()'s eval, labelled by the training data's `classes`. */
export function evaluationData(
  data: TrainingData | undefined,
  dataloaders: DataloaderConfiguration,
  classes: string[] | undefined,
): TrainingData {
  const evalData = withTrainingClasses(data ?? dataloaders.eval, classes, 'evaluate');
  if (evalData === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'evaluate: give data, or return { eval } from configureDataloaders()',
    );
  }
  return evalData;
}
