// The files and labels of an image folder with a subfolder per class, found
// as torchvision's ImageFolder finds them (find_classes, make_dataset): classes
// are the sorted subfolder names, files are walked recursively with folders in
// sorted path order and names sorted within each, and a file counts by its
// extension. An empty class folder is an error naming it.
import fs from 'node:fs/promises';
import path from 'node:path';

import { firebrandError } from '../errors';

/** The extensions read (lower-cased), of torchvision's IMG_EXTENSIONS those libjpeg, libpng and libwebp decode. */
export const IMAGE_EXTENSIONS = ['.jpg', '.jpeg', '.png', '.webp'];

export interface ImageSamples {
  paths: string[];
  /** Class index of each file. */
  targets: number[];
  /** Class names by index: the subfolder names, sorted. */
  classes: string[];
}

/** Python's sorted() on strings: by code point. */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether `entry` in `folder` is a folder, following symbolic links as os.walk(followlinks=True) does. */
async function isFolder(folder: string, entry: import('node:fs').Dirent): Promise<boolean> {
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  const target = await fs.stat(path.join(folder, entry.name)).catch(() => undefined);
  return target?.isDirectory() ?? false;
}

/** Every folder under `root` (itself included) with its file names, folders sorted by path. */
async function walk(root: string): Promise<{ folder: string; files: string[] }[]> {
  const found: { folder: string; files: string[] }[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const folder = pending.pop() as string;
    const entries = await fs.readdir(folder, { withFileTypes: true });
    const files: string[] = [];
    for (const entry of entries) {
      if (await isFolder(folder, entry)) pending.push(path.join(folder, entry.name));
      else files.push(entry.name);
    }
    found.push({ folder, files: files.sort(byCodePoint) });
  }
  return found.sort((a, b) => byCodePoint(a.folder, b.folder));
}

function isImageFile(name: string): boolean {
  const lower = name.toLowerCase();
  return IMAGE_EXTENSIONS.some((extension) => lower.endsWith(extension));
}

/** The samples of `root`/<class>/**; `allowEmpty` lets a class folder hold no image (torchvision's allow_empty). */
export async function scanImageFolder(root: string, allowEmpty = false): Promise<ImageSamples> {
  const stat = await fs.stat(root).catch(() => undefined);
  if (stat === undefined || !stat.isDirectory()) {
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `${root}: ${stat ? 'is not a folder' : 'no such folder'}; expected a folder with a subfolder per class`,
    );
  }
  const entries = await fs.readdir(root, { withFileTypes: true });
  const classes: string[] = [];
  for (const entry of entries) if (await isFolder(root, entry)) classes.push(entry.name);
  classes.sort(byCodePoint);
  if (classes.length === 0) {
    throw firebrandError(
      'ERR_FIREBRAND_DATA',
      `${root}: no class folder in it; expected ${root}/<class>/<image>, a subfolder per class`,
    );
  }
  const paths: string[] = [];
  const targets: number[] = [];
  const empty: string[] = [];
  for (const [index, name] of classes.entries()) {
    let count = 0;
    let others = 0;
    for (const { folder, files } of await walk(path.join(root, name))) {
      for (const file of files) {
        if (!isImageFile(file)) {
          others += 1;
          continue;
        }
        paths.push(path.join(folder, file));
        targets.push(index);
        count += 1;
      }
    }
    if (count === 0)
      empty.push(others > 0 ? `${path.join(root, name)} (${others} files of other kinds)` : path.join(root, name));
  }
  if (empty.length > 0 && !allowEmpty) {
    throw firebrandError(
      'ERR_FIREBRAND_DATA',
      `class folder${empty.length > 1 ? 's' : ''} ${empty.join(', ')} hold${empty.length > 1 ? '' : 's'} no image ` +
        `(${IMAGE_EXTENSIONS.join(', ')}); add images, remove the folder, or pass allowEmpty: true`,
    );
  }
  return { paths, targets, classes };
}
