// Datasets in the Hugging Face layout, their splits found as the datasets
// library finds them without a loading script or a `configs` entry
// (datasets/data_files.py): shards named data/{split}-00000-of-00002.parquet;
// else a folder named after a split (train/, validation/, dev/, test/, ...);
// else file names holding a split's keyword (train.jsonl, my_test-1.csv); else
// every file is 'train'. A hub id downloads the files into Hugging Face's cache
// (datasets--org--name), as load_dataset does.
import { datasetInfo } from '@huggingface/hub';
import fs from 'node:fs';
import path from 'node:path';

import { firebrandError } from '../errors';
import { optionKeys, refuseUnknownKeys } from '../options/option-keys';
import { hubSnapshot, isHubId, type HubOptions, type SnapshotKind } from './hub-download';

/** The data files firebrand reads: Parquet, JSON Lines, JSON and CSV. */
const DATA_FILE = /\.(parquet|jsonl|json|csv)$/i;
const IGNORED = new Set(['README.md', 'config.json', 'dataset_info.json', 'dataset_infos.json', 'dataset_dict.json']);
const SHARDED = /^data\/([\w.-]+?)-\d{5}-of-\d{5}[^/]*\.[^/]+$/;
const KEYWORDS: [string, string[]][] = [
  ['train', ['train', 'training']],
  ['validation', ['validation', 'valid', 'dev', 'val']],
  ['test', ['test', 'testing', 'eval', 'evaluation']],
];
const SEPARATOR = '[-._ 0-9]';
const DEFAULT_ORDER = KEYWORDS.map(([split]) => split);

const DATASET: SnapshotKind = {
  prefix: 'datasets',
  caller: (id) => `datasetSplits('${id}')`,
  isComplete: (folder) => fs.existsSync(folder),
  commitOf: async (params) => (await datasetInfo({ ...params, additionalFields: ['sha'] })).sha as string,
  fetch: async (files, fetchFile) => {
    for (const file of Object.values(splitsOf([...files])).flat()) await fetchFile(file);
  },
};

/**
 * The splits of a dataset in the Hugging Face layout, by name (train, validation, test first, then others
 * sorted), each its data files' paths in order: a local folder, a hub cache snapshot, or a hub id
 * ('org/name', downloaded into HF_HUB_CACHE at `revision`, from HF_ENDPOINT with HF_TOKEN). Read them with
 * Table.fromParquet / Table.fromJsonl / Dataset.fromSft, which take a split's files.
 */
export async function datasetSplits(source: string, options: HubOptions = {}): Promise<Record<string, string[]>> {
  refuseUnknownKeys(options, optionKeys<HubOptions>()(['revision']), 'datasetSplits options');
  const folder = isHubId(source) ? await hubSnapshot(source, options, DATASET) : source;
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `datasetSplits: ${source} is neither a folder nor a hub id ('org/name')`,
    );
  }
  const splits = splitsOf(filesUnder(folder));
  if (Object.keys(splits).length === 0) {
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `datasetSplits: ${source} holds no data file (.parquet, .jsonl, .json or .csv) outside hidden folders`,
    );
  }
  return Object.fromEntries(
    Object.entries(splits).map(([split, files]) => [split, files.map((file) => path.join(folder, file))]),
  );
}

/** The files under `folder`, as paths relative to it with '/' separators, sorted. */
function filesUnder(folder: string, prefix = ''): string[] {
  return fs
    .readdirSync(path.join(folder, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) return filesUnder(folder, relative);
      return entry.isFile() || entry.isSymbolicLink() ? [relative] : [];
    })
    .sort();
}

/** The data files of `files` (relative paths) by split, as datasets' default patterns assign them. */
export function splitsOf(files: string[]): Record<string, string[]> {
  const data = files.filter(
    (file) =>
      DATA_FILE.test(file) &&
      !IGNORED.has(path.posix.basename(file)) &&
      !file.split('/').some((part) => part.startsWith('.')) &&
      !file
        .split('/')
        .slice(0, -1)
        .some((folder) => folder.startsWith('__')),
  );
  const sharded = grouped(data, (file) => SHARDED.exec(file)?.[1]);
  if (Object.keys(sharded).length > 0) return sharded;
  const inFolders = grouped(data, (file) => splitNamed(file.split('/').slice(0, -1), false));
  if (Object.keys(inFolders).length > 0) return inFolders;
  const inNames = grouped(data, (file) => splitNamed([path.posix.basename(file)], true));
  if (Object.keys(inNames).length > 0) return inNames;
  return data.length > 0 ? { train: data } : {};
}

/** The default split whose keyword one of `names` holds between separators (a file name: followed by one). */
function splitNamed(names: string[], isFileName: boolean): string | undefined {
  for (const [split, keywords] of KEYWORDS) {
    for (const keyword of keywords) {
      const pattern = new RegExp(
        `^(?:.*${SEPARATOR})?${keyword}${isFileName ? `${SEPARATOR}.*` : `(?:${SEPARATOR}.*)?`}$`,
      );
      if (names.some((name) => pattern.test(name))) return split;
    }
  }
  return undefined;
}

/** `files` by the split `splitOf` names (none: left out), default splits first, then the others sorted. */
function grouped(files: string[], splitOf: (file: string) => string | undefined): Record<string, string[]> {
  const bySplit = new Map<string, string[]>();
  for (const file of files) {
    const split = splitOf(file);
    if (split !== undefined) bySplit.set(split, [...(bySplit.get(split) ?? []), file]);
  }
  const order = (split: string) =>
    DEFAULT_ORDER.includes(split) ? DEFAULT_ORDER.indexOf(split) : DEFAULT_ORDER.length;
  const names = [...bySplit.keys()].sort((a, b) => order(a) - order(b) || a.localeCompare(b));
  return Object.fromEntries(names.map((split) => [split, bySplit.get(split) as string[]]));
}
