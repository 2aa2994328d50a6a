// The images of a validation folder that a saved classifier gets wrong, for
// the report's grid. Truth and prediction are compared by class name, so a
// folder missing some of the model's classes is read right.
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { scanImageFolder } from '../images/image-folder';
import type { Model } from '../inference/model';

export interface MisclassifiedImage {
  /** Path from the folder's root. */
  file: string;
  truth: string;
  predicted: string;
  probability: number;
  /** The file itself as a data: URL, so that the page needs nothing beside it. */
  source: string;
}

const MIME_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
};

/** What `model` gets wrong of `folder`/<class>/**, up to `limit` images, in the folder's order; and how many it read. */
export async function misclassifiedImages(
  model: Model,
  folder: string,
  limit: number,
): Promise<{ images: MisclassifiedImage[]; total: number; wrong: number }> {
  const classes = model.classes;
  if (classes === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `report: the model has no class names to compare with ${folder}'s folders (it was not trained on an image folder)`,
    );
  }
  const samples = await scanImageFolder(folder, true);
  const images: MisclassifiedImage[] = [];
  let wrong = 0;
  const batch = 32;
  for (let start = 0; start < samples.paths.length; start += batch) {
    const files = samples.paths.slice(start, start + batch);
    const bytes = files.map((file) => fs.readFileSync(file));
    const top = await model.predictLabels(bytes, { topK: 1 });
    files.forEach((file, index) => {
      const truth = samples.classes[samples.targets[start + index]];
      const [{ label, probability }] = top[index];
      if (String(label) === truth) return;
      wrong++;
      if (images.length >= limit) return;
      const mime = MIME_TYPES[path.extname(file).toLowerCase()];
      images.push({
        file: path.relative(folder, file),
        truth,
        predicted: String(label),
        probability,
        source: `data:${mime};base64,${bytes[index].toString('base64')}`,
      });
    });
  }
  return { images, total: samples.paths.length, wrong };
}
