// A model fromPretrained made, written back in the layout transformers'
// save_pretrained writes: config.json, model.safetensors with the same names
// and layouts, and the folder's generation and tokenizer files, so that
// from_pretrained (Python's or firebrand's) loads what firebrand trained.
import fs from 'node:fs';
import path from 'node:path';

import { replaceFolder } from '../io/folder-writes';
import { CONFIG_FILE, GENERATION_CONFIG_FILE, SAFETENSORS_FILE, type PretrainedSource } from './from-pretrained';

/** The files a checkpoint folder may hold besides its config and weights, copied as they are. */
const COMPANION_FILES = [
  GENERATION_CONFIG_FILE,
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'chat_template.jinja',
  'vocab.json',
  'merges.txt',
  'tokenizer.model',
];

/** Writes the checkpoint folder; config.json's dtype is the weights' (`dtype`), as save_pretrained writes it. */
export async function writePretrained(
  folder: string,
  source: PretrainedSource,
  dtype: string,
  saveWeights: (file: string) => Promise<void>,
): Promise<void> {
  const { torch_dtype: _older, ...config } = source.config;
  await replaceFolder(folder, async (temporary) => {
    fs.writeFileSync(path.join(temporary, CONFIG_FILE), `${JSON.stringify({ ...config, dtype }, null, 2)}\n`);
    await saveWeights(path.join(temporary, SAFETENSORS_FILE));
    for (const name of COMPANION_FILES) {
      const file = path.join(source.folder, name);
      if (fs.existsSync(file)) fs.copyFileSync(file, path.join(temporary, name));
    }
  });
}
