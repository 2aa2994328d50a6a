// Checkpoint folders in the exact shape of real ones (their published configs), with seeded random
// weights at transformers' initialisation scale: what the LLM benches train, decode and serve, with no download.
import fs from 'node:fs';
import path from 'node:path';

import { LlamaForCausalLM, saveSafetensors, Trainer, type LlamaConfig } from '../../src';

export type CheckpointConfig = LlamaConfig & { architectures: string[] };

/** The configs of the checkpoints the bench stands in for (their config.json, as published). */
export const MODELS: Record<string, CheckpointConfig> = {
  'smollm2-135m': {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    vocab_size: 49152,
    hidden_size: 576,
    intermediate_size: 1536,
    num_hidden_layers: 30,
    num_attention_heads: 9,
    num_key_value_heads: 3,
    rms_norm_eps: 1e-5,
    rope_theta: 100000,
    max_position_embeddings: 8192,
    tie_word_embeddings: true,
  },
  'qwen2.5-0.5b': {
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    vocab_size: 151936,
    hidden_size: 896,
    intermediate_size: 4864,
    num_hidden_layers: 24,
    num_attention_heads: 14,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000,
    max_position_embeddings: 32768,
    tie_word_embeddings: true,
  },
  'tinyllama-1.1b': {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    vocab_size: 32000,
    hidden_size: 2048,
    intermediate_size: 5632,
    num_hidden_layers: 22,
    num_attention_heads: 32,
    num_key_value_heads: 4,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    max_position_embeddings: 2048,
    tie_word_embeddings: false,
  },
};
/** A checkpoint folder for `config`: config.json and model.safetensors with firebrand's seeded random weights. */
export async function makeCheckpoint(config: CheckpointConfig, folder: string): Promise<void> {
  const trainer = new Trainer({ model: new LlamaForCausalLM(config), loss: 'cross_entropy', optimizer: 'sgd' });
  await trainer.setup();
  const state = await trainer.stateDict();
  // transformers' initialisation (initializer_range 0.02), so that logits and losses are those of a real
  // model's scale: normal(0, 0.02) weights, zero biases, norms at one. A seeded generator (Box-Muller over an LCG).
  let seed = 1;
  const uniform = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) + 1) / 2147483649;
  for (const [name, tensor] of Object.entries(state)) {
    if (name.endsWith('norm.weight') || !(tensor.data instanceof Float32Array)) continue;
    const data = tensor.data;
    if (name.endsWith('.bias')) {
      data.fill(0);
      continue;
    }
    for (let i = 0; i < data.length; i++)
      data[i] = 0.02 * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  }
  // save_pretrained leaves a tied head out: it is the embedding.
  if (config.tie_word_embeddings) delete state['lm_head.weight'];
  fs.mkdirSync(folder, { recursive: true });
  await saveSafetensors(path.join(folder, 'model.safetensors'), state, { format: 'pt' });
  fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify({ ...config, torch_dtype: 'float32' }, null, 2));
}
