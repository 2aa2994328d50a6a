// A classifier's logits as a service answers with them: probabilities (softmax
// over the classes; one logit a sample read as a binary classifier's, as
// sigmoid, in scikit-learn's two columns [P(0), P(1)]) and labels (the classes
// saved with the model, else class indices), the k most probable first.
import { firebrandError } from '../errors';
import type { TensorData } from '../native';

/** A class: a name saved with the model (a table target's or an image folder's) or its index. */
export type ClassLabel = string | number;

/** One of a sample's k most probable classes. */
export interface ScoredLabel {
  label: ClassLabel;
  probability: number;
}

/** predictProba's probabilities, [samples, classes] float32, from predict's logits. */
export function probabilitiesOf(logits: TensorData): TensorData<Float32Array> {
  const { data, shape } = logits;
  if (shape.length === 1 || (shape.length === 2 && shape[1] === 1)) {
    const probabilities = new Float32Array(shape[0] * 2);
    for (let row = 0; row < shape[0]; row++) {
      const positive = 1 / (1 + Math.exp(-Number(data[row])));
      probabilities[2 * row] = 1 - positive;
      probabilities[2 * row + 1] = positive;
    }
    return { data: probabilities, shape: [shape[0], 2] };
  }
  if (shape.length !== 2) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `predictProba: the model's output has shape [${shape.join(', ')}]; class probabilities need logits [samples, classes] (or [samples] for a binary classifier)`,
    );
  }
  const [rows, classes] = shape;
  const probabilities = new Float32Array(rows * classes);
  for (let row = 0; row < rows; row++) {
    let largest = -Infinity;
    for (let k = 0; k < classes; k++) largest = Math.max(largest, Number(data[row * classes + k]));
    let sum = 0;
    for (let k = 0; k < classes; k++) sum += Math.exp(Number(data[row * classes + k]) - largest);
    for (let k = 0; k < classes; k++) {
      probabilities[row * classes + k] = Math.exp(Number(data[row * classes + k]) - largest) / sum;
    }
  }
  return { data: probabilities, shape: [rows, classes] };
}

/** Each sample's `topK` most probable classes, most probable first (ties: the lower index first). */
export function topLabels(
  probabilities: TensorData<Float32Array>,
  classes: ClassLabel[] | undefined,
  topK: number,
): ScoredLabel[][] {
  const [rows, count] = probabilities.shape;
  if (classes !== undefined && classes.length !== count) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `predictLabels: the model gives ${count} class scores but was saved with ${classes.length} classes (${classes.join(', ')})`,
    );
  }
  if (!Number.isInteger(topK) || topK < 1 || topK > count) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `predictLabels options: topK must be a whole number from 1 to the ${count} classes, got ${JSON.stringify(topK)}`,
    );
  }
  return Array.from({ length: rows }, (_, row) => {
    const scores = Array.from(probabilities.data.subarray(row * count, (row + 1) * count));
    const order = scores.map((_, k) => k).sort((a, b) => scores[b] - scores[a] || a - b);
    return order.slice(0, topK).map((k) => ({ label: classes?.[k] ?? k, probability: scores[k] }));
  });
}
