// `firebrand serve MODEL_DIR`: an OpenAI-compatible server (serve()) over a
// Hugging Face folder (with --adapter, or an adapter folder naming its base)
// or a folder trainer.save wrote beside a tokenizer.json, until SIGINT or SIGTERM.
import fs from 'node:fs';
import path from 'node:path';

import { Model } from '../inference/model';
import { takesAttentionMask } from '../pretrained/from-pretrained';
import { isHubId } from '../pretrained/hub-download';
import { loadPretrainedModel, resolvePretrainedSource } from '../serving/pretrained-model';
import { serve } from '../serving/openai-server';
import type { ServeOptions } from '../serving/serve-options';
import { HuggingFaceTokenizer } from '../text/huggingface-tokenizer';
import { type FlagSetters, integerFlag, parseFlags } from './command-flags';
import { UsageError } from './usage-error';

export const SERVE_USAGE = `Usage: firebrand serve MODEL_DIR [options]

Serves a causal language model as OpenAI's API: POST /v1/chat/completions and /v1/completions
(stream or whole), GET /v1/models. MODEL_DIR is a Hugging Face folder (config.json, safetensors,
tokenizer.json), a PEFT adapter folder whose adapter_config.json names its base model, or a folder
trainer.save wrote with a tokenizer.json beside it.

Options:
  --host H                    interface to listen on (default 127.0.0.1: this machine only)
  --port N                    port (default 8000; 0: a free one)
  --adapter DIR               a PEFT LoRA adapter to apply to MODEL_DIR
  --tokenizer DIR             the tokenizer's folder (default MODEL_DIR, else the adapter's base)
  --served-model-name NAME    the model's name in requests and /v1/models (default MODEL_DIR as given)
  --dtype D                   float32 (default), bfloat16, float16, or auto (config.json's)
  --quantize int8             int8 weights with a scale per output row
  --num-threads N             intra-op threads (default PyTorch's)
  --max-batch-size N          sequences decoded together at most (default 8)
  --max-concurrent-batches N  batches decoding at once (default 2)
  --max-tokens N              tokens per chat reply when a request sets none (default: the checkpoint's, else 256)`;

export interface ServeCommand {
  folder: string;
  adapter?: string;
  tokenizer?: string;
  dtype?: string;
  quantize?: string;
  numThreads?: number;
  server: ServeOptions;
}

type Parsed = Partial<ServeCommand> & { server: ServeOptions };

/** Each flag, and what its value sets. */
const FLAGS: FlagSetters<Parsed> = {
  '--host': (command, value) => (command.server.host = value()),
  '--port': (command, value, flag) => (command.server.port = integerFlag(flag, value(), 0)),
  '--adapter': (command, value) => (command.adapter = value()),
  '--tokenizer': (command, value) => (command.tokenizer = value()),
  '--served-model-name': (command, value) => (command.server.modelName = value()),
  '--dtype': (command, value) => (command.dtype = value()),
  '--quantize': (command, value) => (command.quantize = value()),
  '--num-threads': (command, value, flag) => (command.numThreads = integerFlag(flag, value(), 1)),
  '--max-batch-size': (command, value, flag) => (command.server.maxBatchSize = integerFlag(flag, value(), 1)),
  '--max-concurrent-batches': (command, value, flag) =>
    (command.server.maxConcurrentBatches = integerFlag(flag, value(), 1)),
  '--max-tokens': (command, value, flag) => (command.server.defaultMaxTokens = integerFlag(flag, value(), 1)),
};

/** serve's arguments; undefined means --help. */
export function parseServeArguments(args: string[]): ServeCommand | undefined {
  const command: Parsed = { server: {} };
  const positional = (argument: string) => {
    if (command.folder !== undefined)
      throw new UsageError(`serve: one MODEL_DIR, got ${command.folder} and ${argument}`);
    command.folder = argument;
  };
  if (!parseFlags('serve', args, command, FLAGS, positional)) return undefined;
  if (command.folder === undefined) throw new UsageError('serve: give MODEL_DIR, the model folder to serve');
  return { ...command, folder: command.folder, server: { modelName: command.folder, ...command.server } };
}

const hasTokenizer = (folder: string) => fs.existsSync(path.join(folder, 'tokenizer.json'));

/** The model and tokenizer `command` names: a folder trainer.save wrote, or a Hugging Face one. */
async function loadServed(command: ServeCommand): Promise<{ model: Model; tokenizer: HuggingFaceTokenizer }> {
  const { folder, adapter, dtype, quantize, numThreads } = command;
  if (fs.existsSync(path.join(folder, 'firebrand_model.json'))) {
    for (const [flag, given] of [
      ['--adapter', adapter],
      ['--dtype', dtype],
      ['--quantize', quantize],
      ['--num-threads', numThreads],
    ]) {
      if (given !== undefined)
        throw new UsageError(`serve: ${flag} is for Hugging Face folders; ${folder} was saved by trainer.save`);
    }
    return { model: await Model.load(folder), tokenizer: HuggingFaceTokenizer.fromFile(command.tokenizer ?? folder) };
  }
  const { checkpoint } = resolvePretrainedSource(folder, adapter);
  const tokenizerFolder = command.tokenizer ?? [folder, checkpoint].find(hasTokenizer) ?? folder;
  const tokenizer = await HuggingFaceTokenizer.fromPretrained(tokenizerFolder);
  const model = await loadPretrainedModel(folder, {
    adapter,
    ...(dtype === undefined ? {} : { dtype: dtype as 'float32' }),
    ...(quantize === undefined ? {} : { quantize: quantize as 'int8' }),
    ...(numThreads === undefined ? {} : { numThreads }),
    // Prompts of different lengths then decode together, left-padded.
    attentionMask: !isHubId(checkpoint) && takesAttentionMask(checkpoint),
  });
  return { model, tokenizer };
}

/** Serves until SIGINT or SIGTERM; `print` says where. */
export async function runServe(command: ServeCommand, print: (text: string) => void): Promise<void> {
  const { model, tokenizer } = await loadServed(command);
  const server = await serve(model, tokenizer, command.server);
  print(`firebrand serve: ${command.server.modelName} at ${server.url}/v1 (Ctrl-C stops)\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void server.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
