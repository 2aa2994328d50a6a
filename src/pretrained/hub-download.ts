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

function storageOf(id: string): string {
  return path.join(cacheDir(), `models--${id.replace('/', '--')}`);
}

/** The cached snapshot of `id` at `revision`, or undefined when the cache has none. */
function cachedSnapshot(id: string, revision: string): string | undefined {
  const storage = storageOf(id);
  const ref = path.join(storage, 'refs', revision);
  const commit = COMMIT.test(revision)
    ? revision
    : fs.existsSync(ref)
      ? fs.readFileSync(ref, 'utf8').trim()
      : undefined;
  const folder = commit === undefined ? undefined : path.join(storage, 'snapshots', commit);
  return folder !== undefined && fs.existsSync(path.join(folder, 'config.json')) ? folder : undefined;
}

/** The snapshot folder of `id` at `revision`, downloading what the cache lacks. */
export async function hubSnapshot(id: string, { revision = 'main' }: HubOptions = {}): Promise<string> {
  const offline = ['1', 'true', 'yes', 'on'].includes((process.env.HF_HUB_OFFLINE ?? '').toLowerCase());
  const cached = cachedSnapshot(id, revision);
  if (offline) {
    if (cached !== undefined) return cached;
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `fromPretrained('${id}'): HF_HUB_OFFLINE is set and the cache (${storageOf(id)}) has no snapshot at revision '${revision}'`,
    );
  }
  try {
    return await download(id, revision);
  } catch (error) {
    if (cached !== undefined) return cached;
    throw firebrandError(
      'ERR_FIREBRAND_FILE',
      `fromPretrained('${id}'): cannot download revision '${revision}' from ${hubUrl()} and the cache (${storageOf(id)}) has none: ${(error as Error).message}`,
    );
  }
}

function hubUrl(): string {
  return (process.env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
}

async function download(id: string, revision: string): Promise<string> {
  const common = { hubUrl: hubUrl(), accessToken: process.env.HF_TOKEN || undefined, cacheDir: cacheDir() };
  const { sha } = await modelInfo({ ...common, name: id, revision, additionalFields: ['sha'] });
  const commit = sha as string;
  if (revision !== commit) {
    const ref = path.join(storageOf(id), 'refs', revision);
    fs.mkdirSync(path.dirname(ref), { recursive: true });
    fs.writeFileSync(ref, commit);
  }
  const files = new Set<string>();
  for await (const entry of listFiles({ ...common, repo: id, revision: commit })) files.add(entry.path);
  const fetchFile = (file: string) => downloadFileToCacheDir({ ...common, repo: id, path: file, revision: commit });
  for (const file of WANTED.filter((name) => files.has(name))) await fetchFile(file);
  const folder = path.join(storageOf(id), 'snapshots', commit);
  const index = path.join(folder, 'model.safetensors.index.json');
  if (fs.existsSync(index)) {
    const weightMap = readJsonObject(index, `fromPretrained('${id}')`).weight_map as Record<string, string>;
    for (const shard of new Set(Object.values(weightMap ?? {}))) await fetchFile(shard);
  }
  return folder;
}
