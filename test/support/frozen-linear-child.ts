// Run by test/frozen-linear.test.ts, with and without FIREBRAND_ONEDNN_SGEMM=0: trains models whose
// middle linear layer (with a bias) is frozen (a narrow one and a wide one), so that its input gradient flows to the layer below, and
// a small Llama's LoRA adapters over frozen projections (plain, and with its decoder layers checkpointed),
// then prints whether oneDNN's sgemm ran, the losses, the trained weights and the predictions as JSON.
import { Dataset, LlamaForCausalLM, nn, runtimeInfo, Trainer } from '../../src';
import { seededRandom } from './helpers';

// Sizes that are not multiples of a kernel's 16 columns. The narrow model's frozen products are oneDNN's sgemm's;
// the wide one's (64 x 385 x 371 multiply-adds, over 64³) its matmul's, where the libtorch links oneDNN 3.
const features = 27;
const narrow = { samples: 21, batchSize: 7, widths: [41, 35], lr: 0.1 };
const wide = { samples: 128, batchSize: 64, widths: [385, 371], lr: 0.5 };

type StateDict = Awaited<ReturnType<Trainer['stateDict']>>;

async function frozenMiddleLayer({ samples, batchSize, widths: [first, second], lr }: typeof narrow): Promise<{
  losses: number[];
  initial: StateDict;
  weights: StateDict;
  predictions: number[];
  plainMatmulProducts: number;
}> {
  const random = seededRandom(11);
  const inputs = new Float32Array(samples * features).map(() => random() * 2 - 1);
  const targets = new Float32Array(samples * 5).map(() => random() * 2 - 1);
  const losses: number[] = [];
  const trainer = new Trainer({
    model: nn.sequential(
      nn.linear(features, first),
      nn.relu(),
      nn.linear(first, second),
      nn.tanh(),
      nn.linear(second, 5),
    ),
    loss: 'mse',
    optimizer: { name: 'sgd', lr },
    config: { numEpochs: 2, batchSize, seed: 5, progressBar: false, numThreads: 1, freeze: ['2'] },
    callbacks: { postTrainBatch: ({ loss }) => void losses.push(loss) },
  });
  await trainer.setup();
  const initial = await trainer.stateDict();
  const before = runtimeInfo().onednnPlainMatmulProducts;
  await trainer.fit(
    Dataset.fromArrays({ inputs, inputShape: [samples, features], targets, targetShape: [samples, 5] }),
  );
  const plainMatmulProducts = runtimeInfo().onednnPlainMatmulProducts - before;
  const predictions = await trainer.predict(inputs, [samples, features]);
  return {
    losses,
    initial,
    weights: await trainer.stateDict(),
    predictions: Array.from(predictions.data as Float32Array),
    plainMatmulProducts,
  };
}

async function loraOverFrozenProjections(
  activationCheckpointing?: string,
): Promise<{ losses: number[]; weights: StateDict }> {
  const model = new LlamaForCausalLM({
    model_type: 'llama',
    vocab_size: 67,
    hidden_size: 40,
    intermediate_size: 72,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    max_position_embeddings: 32,
    tie_word_embeddings: false,
  });
  const losses: number[] = [];
  const trainer = new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-2 },
    lora: { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'o_proj', 'down_proj'] },
    config: {
      numEpochs: 1,
      batchSize: 2,
      seed: 9,
      progressBar: false,
      numThreads: 1,
      shuffle: false,
      activationCheckpointing,
    },
    callbacks: { postTrainBatch: ({ loss }) => void losses.push(loss) },
  });
  const ids = Int32Array.from({ length: 17 * 6 }, (_, i) => (i * 31 + 7) % 67);
  await trainer.fit(Dataset.fromTokens(ids, { contextLength: 16 }));
  return { losses, weights: await trainer.stateDict() };
}

async function main(): Promise<void> {
  const middle = await frozenMiddleLayer(narrow);
  const widened = await frozenMiddleLayer(wide);
  const lora = await loraOverFrozenProjections();
  const checkpointed = await loraOverFrozenProjections('model.layers.*');
  const plain = (state: StateDict) =>
    Object.fromEntries(Object.entries(state).map(([name, tensor]) => [name, Array.from(tensor.data as Float32Array)]));
  process.stdout.write(
    `${JSON.stringify({
      onednnSgemm: runtimeInfo().onednnSgemm,
      onednnMatmul: runtimeInfo().onednnMatmul,
      middle: { ...middle, initial: plain(middle.initial), weights: plain(middle.weights) },
      wide: { ...widened, initial: plain(widened.initial), weights: plain(widened.weights) },
      lora: { ...lora, weights: plain(lora.weights) },
      checkpointed: { ...checkpointed, weights: plain(checkpointed.weights) },
    })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
