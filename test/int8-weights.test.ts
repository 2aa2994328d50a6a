// fromPretrained's quantize: 'int8' and the streamed linear layer that decodes with it. The reference is
// the quantization itself, written out here as transformers/bitsandbytes define it (per output row,
// scale = max |w| / 127, values rounded into [-127, 127]): a float32 checkpoint of the dequantized
// weights, loaded without quantize, must compute the same logits, losses and tokens as the int8 model.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Dataset, fromPretrained, LlamaForCausalLM, nn, saveSafetensors, Trainer, type LlamaConfig } from '../src';
import { expectClose } from './support/expect-close';
import { rejectionOf } from './support/helpers';

// Widths that are not multiples of the kernel's 32 columns (48 = 32 + 16, 80 = 64 + 16).
const config: LlamaConfig & { architectures: string[] } = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  vocab_size: 96,
  hidden_size: 48,
  intermediate_size: 80,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  max_position_embeddings: 64,
  tie_word_embeddings: false,
};
const PROJECTION = /_proj\.weight$/;
const LORA = { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'down_proj'] };

/** Row-wise symmetric int8 of `data` [rows, columns], dequantized, in float32 arithmetic as libtorch does it. */
function int8RoundTrip(data: Float32Array, columns: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let row = 0; row < data.length / columns; row++) {
    const slice = data.subarray(row * columns, (row + 1) * columns);
    let max = 0;
    for (const value of slice) max = Math.max(max, Math.abs(value));
    const scale = max === 0 ? 1 : Math.fround(max / 127);
    for (let i = 0; i < columns; i++) {
      const q = Math.min(127, Math.max(-127, Math.round(Math.fround(slice[i] / scale))));
      out[row * columns + i] = Math.fround(q * scale);
    }
  }
  return out;
}

/** The numbers a child process running `script` prints as JSON, under FIREBRAND_CPU_BASELINE=`baseline`. */
const numbersPrintedBy = (script: string, baseline: string) =>
  JSON.parse(
    execFileSync(process.execPath, ['-e', script], {
      env: { ...process.env, FIREBRAND_CPU_BASELINE: baseline },
      encoding: 'utf8',
    }).trim(),
  ) as number[];

/** A seeded checkpoint of `shape` in `work`, and the same with its projections' weights int8-round-tripped. */
async function writeCheckpoints(work: string, shape: typeof config): Promise<{ plain: string; dequantized: string }> {
  const maker = new Trainer({
    model: new LlamaForCausalLM(shape),
    loss: 'cross_entropy',
    optimizer: 'sgd',
    config: { seed: 7, progressBar: false },
  });
  await maker.setup();
  const state = await maker.stateDict();
  const write = async (folder: string, tensors: typeof state) => {
    fs.mkdirSync(folder);
    await saveSafetensors(path.join(folder, 'model.safetensors'), tensors, { format: 'pt' });
    fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify({ ...shape, dtype: 'float32' }));
  };
  const folders = { plain: path.join(work, 'plain'), dequantized: path.join(work, 'dequantized') };
  await write(folders.plain, state);
  const rounded = Object.fromEntries(
    Object.entries(state).map(([name, tensor]) =>
      PROJECTION.test(name)
        ? [name, { ...tensor, data: int8RoundTrip(tensor.data as Float32Array, tensor.shape[1]) }]
        : [name, tensor],
    ),
  );
  await write(folders.dequantized, rounded);
  return folders;
}

const trainerOf = async (
  folder: string,
  options: { quantize?: 'int8'; dtype?: 'bfloat16' } = {},
  lora = false,
  losses: number[] = [],
  activationCheckpointing: string[] = [],
) =>
  new Trainer({
    model: await fromPretrained(folder, options),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-2 },
    lora: lora ? LORA : undefined,
    config: {
      progressBar: false,
      numThreads: 1,
      seed: 3,
      batchSize: 2,
      shuffle: false,
      numEpochs: 3,
      activationCheckpointing,
    },
    callbacks: { postTrainBatch: ({ loss }) => void losses.push(loss) },
  });

describe("fromPretrained quantize: 'int8', against the same weights dequantized in float32", function () {
  this.timeout(120_000);
  let work: string;
  let plain: string;
  let dequantized: string;
  const ids = Int32Array.from({ length: 2 * 9 }, (_, i) => (i * 37 + 5) % config.vocab_size);

  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-int8-'));
    ({ plain, dequantized } = await writeCheckpoints(work, config));
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it('holds int8 values and a float scale per row for every projection; the head and norms stay float32', async () => {
    const trainer = await trainerOf(plain, { quantize: 'int8' });
    const state = await trainer.stateDict();
    const q = state['model.layers.0.self_attn.q_proj.weight'];
    expect(q.data).to.be.instanceOf(Int8Array);
    expect(q.shape).to.deep.equal([48, 48]);
    expect(state['model.layers.0.self_attn.q_proj.weight_scale'].shape).to.deep.equal([48]);
    expect(state['model.layers.1.mlp.down_proj.weight'].data).to.be.instanceOf(Int8Array);
    expect(state['lm_head.weight'].data).to.be.instanceOf(Float32Array);
    expect(state['model.norm.weight'].data).to.be.instanceOf(Float32Array);
    // Each row's largest value is ±127.
    const values = q.data as Int8Array;
    const rowMax = Math.max(...Array.from(values.subarray(0, 48), Math.abs));
    expect(rowMax).to.equal(127);
  });

  it("computes the dequantized float32 model's logits, for a batch and one position at a time", async () => {
    const int8 = await trainerOf(plain, { quantize: 'int8' });
    const reference = await trainerOf(dequantized);
    expectClose(await int8.predict(ids, [2, 9]), await reference.predict(ids, [2, 9]), 'batch logits');
    // One row: the streamed kernel reads the int8 weight itself.
    const one = ids.subarray(0, 1);
    expectClose(await int8.predict(one, [1, 1]), await reference.predict(one, [1, 1]), 'one-position logits');
    const tokens = async (trainer: Trainer) => {
      const out: number[] = [];
      for await (const token of trainer.generate(Array.from(ids.subarray(0, 5)), {
        maxNewTokens: 8,
        greedy: true,
        stopTokens: [],
      }))
        out.push(token);
      return out;
    };
    expect(await tokens(int8)).to.deep.equal(await tokens(reference));
  });

  it('trains LoRA adapters on the int8 base to the losses of the dequantized float32 base; the base stays put', async () => {
    const data = () => Dataset.fromTokens(ids, { contextLength: 8 });
    const [int8Losses, referenceLosses]: number[][] = [[], []];
    const int8 = await trainerOf(plain, { quantize: 'int8' }, true, int8Losses);
    await int8.setup();
    const before = Array.from((await int8.stateDict())['model.layers.0.mlp.down_proj.weight'].data as Int8Array);
    const reference = await trainerOf(dequantized, {}, true, referenceLosses);
    // The adapters' A matrices are drawn by the seed on both sides: the same adapters, the same steps.
    await int8.fit(data());
    await reference.fit(data());
    expect(int8Losses).to.have.length(3);
    expectClose(int8Losses, referenceLosses, 'LoRA losses');
    const after = await int8.stateDict();
    expect(Array.from(after['model.layers.0.mlp.down_proj.weight'].data as Int8Array)).to.deep.equal(before);
    const adapter = after['model.layers.0.mlp.down_proj.lora_B.weight'].data as Float32Array;
    expect(Math.max(...Array.from(adapter, Math.abs))).to.be.above(0);
    // Gradient checkpointing composes: decoder layers recomputed in backward give the same steps.
    const recomputed: number[] = [];
    const checkpointed = await trainerOf(plain, { quantize: 'int8' }, true, recomputed, ['model.layers.*']);
    await checkpointed.fit(data());
    expectClose(recomputed, int8Losses, 'LoRA losses with checkpointed layers');
    const name = 'model.layers.1.self_attn.q_proj.lora_B.weight';
    expectClose((await checkpointed.stateDict())[name], after[name], 'adapter weights with checkpointed layers');
  });

  it('works under a bfloat16 model, near the float32 logits', async () => {
    const int8 = await trainerOf(plain, { quantize: 'int8', dtype: 'bfloat16' });
    const reference = await trainerOf(dequantized);
    // bfloat16 activations: 8 bits of mantissa through two layers.
    expectClose(await int8.predict(ids, [2, 9]), await reference.predict(ids, [2, 9]), 'bf16 logits', {
      tolerance: 0.1,
      absolute: true,
    });
  });

  it('refuses what int8 weights cannot do, and options it does not know', async () => {
    const trainer = await trainerOf(plain, { quantize: 'int8' }, true);
    await trainer.setup();
    const merge = await rejectionOf(trainer.mergeAdapter());
    expect(merge.message).to.match(/int8 weights .*saveAdapter/);
    const bare = await trainerOf(plain, { quantize: 'int8' });
    await bare.setup();
    expect(
      (
        await rejectionOf(
          bare.exportOnnx(path.join(work, 'm.onnx'), { example: { data: ids.subarray(0, 4), shape: [1, 4] } }),
        )
      ).message,
    ).to.match(/holds int8 weights/);
    const wrong = await rejectionOf(fromPretrained(plain, { quantize: 'int4' as 'int8' }));
    expect(wrong.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(wrong.message).to.match(/quantize: expected 'int8'/);
    const typo = await rejectionOf(fromPretrained(plain, { quantise: 'int8' } as object));
    expect(typo.message).to.match(/'quantise'.*quantize/);
  });
});

describe('the streamed linear layer (one row at inference) against at::linear', function () {
  this.timeout(60_000);
  it('gives the batched float32 and bfloat16 results, with widths off the 32-column blocks', async () => {
    for (const dtype of ['float32', 'bfloat16'] as const) {
      const model = nn.sequential(nn.linear(77, 19));
      if (dtype === 'bfloat16') model.to('bfloat16');
      const trainer = new Trainer({
        model,
        loss: 'mse',
        optimizer: 'sgd',
        config: { progressBar: false, numThreads: 1, seed: 1 },
      });
      const rows = Float32Array.from({ length: 16 * 77 }, (_, i) => Math.sin(i * 0.37));
      const batched = await trainer.predict(rows, [16, 77]);
      for (const count of [1, 2]) {
        const few = await trainer.predict(rows.subarray(0, count * 77), [count, 77]);
        expectClose(few.data, batched.data.subarray(0, count * 19), `${dtype} ${count} rows`, {
          tolerance: dtype === 'float32' ? 1e-5 : 2 ** -7,
        });
      }
    }
  });

  it("gives the AVX-512 and AVX2 versions' outputs to float32 rounding in the portable one (FIREBRAND_CPU_BASELINE)", function () {
    // A child process: the CPU check is made once per process.
    const script = `
      const { Trainer, nn } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
      (async () => {
        const model = nn.sequential(nn.linear(77, 19));
        const trainer = new Trainer({ model, loss: 'mse', optimizer: 'sgd', config: { progressBar: false, numThreads: 1, seed: 1 } });
        const rows = Float32Array.from({ length: 77 }, (_, i) => Math.sin(i * 0.37));
        console.log(JSON.stringify(Array.from((await trainer.predict(rows, [1, 77])).data)));
      })();`;
    const run = (baseline: string) => numbersPrintedBy(script, baseline);
    const [portable, avx2, best] = [run('1'), run('avx2'), run('0')];
    expectClose(portable, avx2, 'portable against AVX2 kernel');
    expectClose(portable, best, "portable against the CPU's best kernel");
    // The sums ran in another order: the portable version ran, and the AVX-512 one where the CPU has it.
    expect(portable).to.not.deep.equal(avx2);
    const flags =
      fs
        .readFileSync('/proc/cpuinfo', 'utf8')
        .match(/^flags\s*:(.*)$/m)?.[1]
        .split(' ') ?? [];
    if (flags.includes('avx512f')) expect(best).to.not.deep.equal(avx2);
    else console.log('      (no AVX-512 on this CPU: its AVX2 version is its best)');
  });
});

describe('int8 weights widened for a batch (forward and backward)', function () {
  this.timeout(120_000);
  // Widths off the kernels' 16-column blocks (56 = 48 + 8, 88 = 80 + 8): their tails run too.
  const shape = { ...config, hidden_size: 56, intermediate_size: 88 };
  let work: string;
  let folders: { plain: string; dequantized: string };
  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-int8-widen-'));
    folders = await writeCheckpoints(work, shape);
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it('gives a bfloat16 model the bfloat16 of the dequantized weights, bit for bit, in each kernel version', async function () {
    // A child process per FIREBRAND_CPU_BASELINE: the CPU check is made once per process.
    const script = `
      const { fromPretrained, Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
      (async () => {
        const trainer = new Trainer({
          model: await fromPretrained(${JSON.stringify(folders.plain)}, { quantize: 'int8', dtype: 'bfloat16' }),
          loss: 'cross_entropy', optimizer: 'sgd', config: { progressBar: false, numThreads: 1 },
        });
        const ids = Int32Array.from({ length: 18 }, (_, i) => (i * 37 + 5) % ${shape.vocab_size});
        console.log(JSON.stringify(Array.from((await trainer.predict(ids, [2, 9])).data)));
      })();`;
    const run = (baseline: string) => numbersPrintedBy(script, baseline);
    // The reference: the int8 model's own values times scales in float32, read as bfloat16 (rounded to
    // nearest even by c10, as the widening must), everything else its bfloat16 values.
    const int8 = await trainerOf(folders.plain, { quantize: 'int8', dtype: 'bfloat16' });
    const state = await int8.stateDict();
    const widened: typeof state = {};
    for (const [name, tensor] of Object.entries(state)) {
      if (name.endsWith('.weight_scale')) continue;
      const scale = state[name.replace(/\.weight$/, '.weight_scale')]?.data;
      if (!scale) widened[name] = tensor;
      else {
        const columns = tensor.shape[1];
        const data = Float32Array.from(tensor.data as Int8Array, (value, i) =>
          Math.fround(value * Number(scale[Math.floor(i / columns)])),
        );
        widened[name] = { data, shape: tensor.shape };
      }
    }
    const folder = path.join(work, 'widened');
    fs.mkdirSync(folder);
    await saveSafetensors(path.join(folder, 'model.safetensors'), widened, { format: 'pt' });
    fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify({ ...shape, dtype: 'float32' }));
    const reference = await trainerOf(folder, { dtype: 'bfloat16' });
    const ids = Int32Array.from({ length: 18 }, (_, i) => (i * 37 + 5) % shape.vocab_size);
    const expected = Array.from((await reference.predict(ids, [2, 9])).data);
    for (const baseline of ['1', 'avx2', '0'])
      expect(run(baseline), `FIREBRAND_CPU_BASELINE=${baseline}`).to.deep.equal(expected);
  });
});
