// Hub ids ('org/name') as transformers resolves them: the files a checkpoint
// needs, downloaded by @huggingface/hub into Hugging Face's standard cache
// (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub) at a
// revision (branch, tag or commit), from HF_ENDPOINT with HF_TOKEN. With
// HF_HUB_OFFLINE=1, or when the hub cannot be reached, the cache alone answers.
import { downloadFileToCacheDir, listFiles, modelInfo } from '@huggingface/hub';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { firebrandError } from '../errors';
import { readJsonObject } from '../io/json-file';

/** The files fromPretrained reads, when the repository has them; the shards an index names come after it. */
const WANTED = [
  'config.json',
  'generation_config.json',
  'model.safetensors',
  'model.safetensors.index.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'chat_template.jinja',
];
const COMMIT = /^[0-9a-f]{40}$/;

export interface HubOptions {
  /** A branch, tag or commit hash (default 'main'). */
  revision?: string;
}

/** Whether `source` names a hub repository rather than a folder: 'org/name' that is not a path here. */
export function isHubId(source: string): boolean {
  return /^[\w.-]+\/[\w.-]+$/.test(source) && !fs.existsSync(source);
}

function cacheDir(): string {
  if (process.env.HF_HUB_CACHE) return process.env.HF_HUB_CACHE;
  return path.join(process.env.HF_HOME ?? path.join(os.homedir(), '.cache', 'huggingface'), 'hub');
}

/** What a kind of repository needs from the hub: its cache folder's prefix, its info call, its files. */
export interface SnapshotKind {
  /** 'models' or 'datasets': the cache folder is `${prefix}--org--name`, as huggingface_hub names it. */
  prefix: 'models' | 'datasets';
  /** Who asks, for errors: "fromPretrained('org/name')". */
  caller: (id: string) => string;
  /** Whether a cached snapshot folder holds what is needed (offline, or when the hub is unreachable). */
  isComplete: (folder: string) => boolean;
  /** The commit `revision` names (modelInfo's or datasetInfo's sha). */
  commitOf: (params: { name: string; revision: string } & HubAccess) => Promise<string>;
  /** Downloads what is needed, given the repository's file paths and a download of one. */
  fetch: (files: Set<string>, fetchFile: (file: string) => Promise<unknown>, folder: string) => Promise<void>;
}

type HubAccess = { hubUrl: string; accessToken: string | undefined };

const MODEL: SnapshotKind = {
  prefix: 'models',
  caller: (id) => `fromPretrained('${id}')`,
  isComplete: (folder) => fs.existsSync(path.join(folder, 'config.json')),
  commitOf: async (params) => (await modelInfo({ ...params, additionalFields: ['sha'] })).sha as string,
  fetch: async (files, fetchFile, folder) => {
    for (const file of WANTED.filter((name) => files.has(name))) await fetchFile(file);
    const index = path.join(folder, 'model.safetensors.index.json');
    if (fs.existsSync(index)) {
      const weightMap = readJsonObject(index, 'fromPretrained').weight_map as Record<string, string>;
      for (const shard of new Set(Object.values(weightMap ?? {}))) await fetchFile(shard);
    }
  },
};

function storageOf(id: string, kind: SnapshotKind): string {
  return path.join(cacheDir(), `${kind.prefix}--${id.replace('/', '--')}`);
}

/** The cached snapshot of `id` at `revision`, or undefined when the cache has none. */
function cachedSnapshot(id: string, revision: string, kind: SnapshotKind): string | undefined {
  const storage = storageOf(id, kind);
  const ref = path.join(storage, 'refs', revision);
  const commit = COMMIT.test(revision)
    ? revision
    : fs.existsSync(ref)
      ? fs.readFileSync(ref, 'utf8').trim()
      : undefined;
  const folder = commit === undefined ? undefined : path.join(storage, 'snapshots', commit);
  return folder !== undefined && kind.isComplete(folder) ? folder : undefined;
}

/** The snapshot folder of `id` at `revision`, downloading what the cache lacks (a model's, by default). */
export async function hubSnapshot(
  id: string,
  { revision = 'main' }: HubOptions = {},
  kind: SnapshotKind = MODEL,
): Promise<string> {
  const offline = ['1', 'true', 'yes', 'on'].includes((process.env.HF_HUB_OFFLINE ?? '').toLowerCase());
  const cached = cachedSnapshot(id, revision, kind);
  if (offline) {
    if (cached !== undefined) return cached;
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `${kind.caller(id)}: HF_HUB_OFFLINE is set and the cache (${storageOf(id, kind)}) has no snapshot at revision '${revision}'`,
    );
  }
  try {
    return await download(id, revision, kind);
  } catch (error) {
    if (cached !== undefined) return cached;
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `${kind.caller(id)}: cannot download revision '${revision}' from ${hubUrl()} and the cache (${storageOf(id, kind)}) has none: ${(error as Error).message}`,
    );
  }
}

function hubUrl(): string {
  return (process.env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
}

async function download(id: string, revision: string, kind: SnapshotKind): Promise<string> {
  const access: HubAccess = { hubUrl: hubUrl(), accessToken: process.env.HF_TOKEN || undefined };
  const commit = await kind.commitOf({ ...access, name: id, revision });
  if (revision !== commit) {
    const ref = path.join(storageOf(id, kind), 'refs', revision);
    fs.mkdirSync(path.dirname(ref), { recursive: true });
    fs.writeFileSync(ref, commit);
  }
  const repo = { type: kind.prefix === 'models' ? ('model' as const) : ('dataset' as const), name: id };
  const common = { ...access, cacheDir: cacheDir() };
  const files = new Set<string>();
  for await (const entry of listFiles({ ...common, repo, revision: commit, recursive: true })) {
    if (entry.type === 'file') files.add(entry.path);
  }
  const folder = path.join(storageOf(id, kind), 'snapshots', commit);
  const fetchFile = (file: string) => downloadFileToCacheDir({ ...common, repo, path: file, revision: commit });
  await kind.fetch(files, fetchFile, folder);
  return folder;
}
