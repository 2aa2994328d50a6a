// Decoding a Llama-family model runs each decoder layer as one native call per
// new position (native/core/nn/llama_decode_layer) instead of its ~70 ops: the
// tokens and log-probabilities must be the ops' own (FIREBRAND_DECODE_KERNELS=0
// runs the ops), for every layout the family has.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import {
  fromPretrained,
  LlamaForCausalLM,
  type LlamaConfig,
  manualSeed,
  type Model,
  runtimeInfo,
  saveSafetensors,
  Trainer,
} from '../src';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'pretrained');

const llama: LlamaConfig = {
  model_type: 'llama',
  vocab_size: 97,
  hidden_size: 64,
  intermediate_size: 96,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-5,
  max_position_embeddings: 128,
};

/** Qwen2: q, k and v with biases; every layer's window is 5 positions, which decoding goes past. */
const qwen2Windowed: LlamaConfig = {
  ...llama,
  model_type: 'qwen2',
  num_key_value_heads: 1,
  use_sliding_window: true,
  sliding_window: 5,
  max_window_layers: 0,
};

/** A checkpoint folder of `config` with seeded weights large enough that the tokens vary. */
async function checkpoint(folder: string, config: LlamaConfig): Promise<string> {
  manualSeed(7);
  const trainer = new Trainer({ model: new LlamaForCausalLM(config), config: { progressBar: false } });
  await trainer.setup();
  const state = await trainer.stateDict();
  for (const [name, tensor] of Object.entries(state)) {
    if (tensor.data instanceof Float32Array && !name.endsWith('norm.weight')) {
      tensor.data.forEach((value, i, data) => (data[i] = value * 4 + (name.endsWith('bias') ? 0.1 : 0)));
    }
  }
  fs.mkdirSync(folder, { recursive: true });
  await saveSafetensors(path.join(folder, 'model.safetensors'), state, { format: 'pt' });
  fs.writeFileSync(
    path.join(folder, 'config.json'),
    JSON.stringify({ ...config, architectures: ['LlamaForCausalLM'] }),
  );
  return folder;
}

/** The checkpoint's model; kernels false builds it with FIREBRAND_DECODE_KERNELS=0 (its ops decode). */
async function load(
  source: string,
  options: Parameters<typeof fromPretrained>[1],
  kernels: boolean,
  adapter?: string,
): Promise<Model> {
  if (!kernels) process.env.FIREBRAND_DECODE_KERNELS = '0';
  try {
    const trainer = new Trainer({
      model: await fromPretrained(source, options),
      config: { progressBar: false, numThreads: 1 },
      ...(adapter && { lora: { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] } }),
    });
    await trainer.setup();
    if (adapter) await trainer.loadAdapter(adapter);
    return trainer.model;
  } finally {
    delete process.env.FIREBRAND_DECODE_KERNELS;
  }
}

interface Decoded {
  tokens: (number | null)[][];
  logprobs: (number | null)[][];
  kernelSteps: number;
}

async function decode(model: Model, prompts: number[][], maxNewTokens: number): Promise<Decoded> {
  const before = runtimeInfo().decodeKernelSteps;
  const decoded: Decoded = { tokens: [], logprobs: [], kernelSteps: 0 };
  for await (const step of model.generateBatchWithLogprobs(prompts, { maxNewTokens, greedy: true, stopTokens: [] })) {
    decoded.tokens.push(step.tokens);
    decoded.logprobs.push(step.logprobs ?? []);
  }
  decoded.kernelSteps = runtimeInfo().decodeKernelSteps - before;
  return decoded;
}

describe('decode kernels: one native call per decoder layer and position', function () {
  this.timeout(120_000);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-decode-kernels-'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  const prompt = [[5, 17, 3, 60, 41, 9]];
  const padded = [
    [5, 17, 3, 60, 41, 9],
    [88, 2, 14],
  ];

  const cases = [
    // 70 new tokens: past the 64 positions the kernel holds at first, so its cache grows (or, under the
    // window, drops what the window no longer sees).
    {
      name: 'Llama with grouped-query attention, float32, past 64 positions',
      config: llama,
      options: {},
      prompts: prompt,
      step: 1e-5,
      maxNewTokens: 70,
    },
    {
      name: 'Qwen2 with q, k, v biases and a sliding window of 5, decoded past it and past 64 positions',
      config: qwen2Windowed,
      options: {},
      prompts: prompt,
      step: 1e-5,
      maxNewTokens: 70,
    },
    {
      name: 'a left-padded batch of two prompts (attentionMask)',
      config: llama,
      options: { attentionMask: true },
      prompts: padded,
      step: 1e-5,
    },
    {
      name: 'bfloat16 weights',
      config: llama,
      options: { dtype: 'bfloat16' as const },
      prompts: prompt,
      step: 2 ** -7,
    },
    {
      name: 'int8 weights (quantize: int8 over bfloat16)',
      config: llama,
      options: { dtype: 'bfloat16' as const, quantize: 'int8' as const },
      prompts: padded.slice(0, 1),
      step: 2 ** -7,
    },
  ];
  cases.forEach(({ name, config, options, prompts, step, maxNewTokens = 12 }, index) => {
    it(`gives the ops' tokens and log-probabilities: ${name}`, async () => {
      const source = await checkpoint(path.join(root, `case-${index}`), config);
      const ops = await decode(await load(source, options, false), prompts, maxNewTokens);
      const kernels = await decode(await load(source, options, true), prompts, maxNewTokens);
      expect(ops.kernelSteps, 'kernel calls with FIREBRAND_DECODE_KERNELS=0').to.equal(0);
      // Every token after the prompt's forward: one call per layer.
      expect(kernels.kernelSteps).to.equal(config.num_hidden_layers * (maxNewTokens - 1));
      expect(kernels.tokens).to.deep.equal(ops.tokens);
      expect(new Set(kernels.tokens.flat()).size, 'distinct tokens').to.be.greaterThan(2);
      kernels.logprobs.forEach((row, t) =>
        row.forEach((logprob, i) => {
          const reference = ops.logprobs[t][i] as number;
          expect(logprob, `token ${t} of prompt ${i}`).to.be.closeTo(reference, step * (1 + Math.abs(reference)));
        }),
      );
    });
  });

  it("gives the ops' tokens with the kernel's AVX2 and portable versions too (FIREBRAND_CPU_BASELINE)", async () => {
    // A child process per baseline: the CPU check is made once per process. 70 tokens: past 64 held positions.
    const source = await checkpoint(path.join(root, 'baselines'), llama);
    const script = `
      const { fromPretrained, runtimeInfo, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
      (async () => {
        const tokens = async (dtype, kernels) => {
          process.env.FIREBRAND_DECODE_KERNELS = kernels ? '1' : '0';
          const model = await fromPretrained(${JSON.stringify(source)}, { dtype });
          const trainer = new Trainer({ model, config: { progressBar: false, numThreads: 1 } });
          await trainer.setup();
          const all = [];
          for await (const token of trainer.generate([5, 17, 3, 60, 41, 9], { maxNewTokens: 70, greedy: true, stopTokens: [] })) all.push(token);
          return all;
        };
        const results = [];
        for (const dtype of ['float32', 'bfloat16']) results.push([await tokens(dtype, true), await tokens(dtype, false)]);
        console.log(JSON.stringify({ results, steps: runtimeInfo().decodeKernelSteps }));
      })();`;
    for (const baseline of ['1', 'avx2']) {
      const { results, steps } = JSON.parse(
        execFileSync(process.execPath, ['-e', script], {
          env: { ...process.env, FIREBRAND_CPU_BASELINE: baseline },
          encoding: 'utf8',
        }).trim(),
      ) as { results: number[][][]; steps: number };
      expect(steps, baseline).to.equal(2 * llama.num_hidden_layers * 69);
      for (const [kernels, ops] of results) expect(kernels, baseline).to.deep.equal(ops);
    }
  });

  it("applies LoRA adapters (PEFT's, float32 on a bfloat16 base) as the ops do", async () => {
    const source = path.join(fixtures, 'llama-bf16');
    const adapter = path.join(fixtures, 'llama-bf16-peft-adapter');
    const ops = await decode(await load(source, {}, false, adapter), [[3, 9, 27, 11]], 10);
    const kernels = await decode(await load(source, {}, true, adapter), [[3, 9, 27, 11]], 10);
    expect(kernels.kernelSteps).to.equal(2 * 9);
    expect(kernels.tokens).to.deep.equal(ops.tokens);
    kernels.logprobs.forEach((row, t) =>
      expect(row[0], `token ${t}`).to.be.closeTo(ops.logprobs[t][0] as number, 2 ** -7 * (1 + Math.abs(row[0] ?? 0))),
    );
  });
});
