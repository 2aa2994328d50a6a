// generate() with a key/value cache: the model runs on the prompt once, then on
// each new token alone. Every model here gives the tokens it gives with a full
// forward per token; a model that reads later or whole-sequence positions falls
// back to full forwards, or with kvCache: true says which op stops the cache.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { expect } from 'chai';

import { Dataset, F, GenerateOptions, Layer, Module, nn, Tensor, torch, Trainer } from '../src';
import { collect, rejectionOf } from './support/helpers';
import { GPTMini } from '../examples/models/gpt';

const vocab = 12;

/** A language model over an embedding: the layers between are each test's. */
abstract class TinyLM extends nn.Module {
  embed = nn.embedding(vocab, 16);
  head = nn.linear(16, vocab);

  abstract body(x: Tensor): Tensor;

  forward(tokens: Tensor): Tensor {
    return this.head.forward(this.body(this.embed.forward(tokens))).transpose(1, 2);
  }
}

class RecurrentLM extends TinyLM {
  lstm = nn.lstm(16, 16, { batchFirst: true, numLayers: 2 });
  gru = nn.gru(16, 16, { batchFirst: true });

  body(x: Tensor): Tensor {
    return this.gru.forward(this.lstm.forward(x)[0])[0];
  }
}

class EncoderLM extends TinyLM {
  positions = nn.embedding(32, 16);
  encoder = nn.transformerEncoder(
    nn.transformerEncoderLayer(16, 2, { dimFeedforward: 32, batchFirst: true, normFirst: true }),
    2,
  );

  body(x: Tensor): Tensor {
    return this.encoder.forward(x.add(this.positions.forward(torch.arange(x.size(1)))), { isCausal: true });
  }
}

/** PyTorch's tutorial layout: sequence first, a sinusoidal table sliced to the sequence's length. */
class SinusoidalEncoderLM extends TinyLM {
  pe = new nn.Buffer([32, 1, 16], { data: sinusoids(32, 16) });
  encoder = nn.transformerEncoder(nn.transformerEncoderLayer(16, 4, { dimFeedforward: 32 }), 1);

  body(x: Tensor): Tensor {
    const sequenceFirst = x.transpose(0, 1);
    const encoded = this.encoder.forward(sequenceFirst.add(this.pe.slice(0, null, sequenceFirst.size(0))), {
      isCausal: true,
    });
    return encoded.transpose(0, 1);
  }
}

function sinusoids(positions: number, dim: number): number[] {
  const table: number[] = [];
  for (let p = 0; p < positions; p++) {
    for (let i = 0; i < dim; i++) table.push((i % 2 ? Math.cos : Math.sin)(p / 10000 ** ((i - (i % 2)) / dim)));
  }
  return table;
}

class BidirectionalLM extends TinyLM {
  lstm = nn.lstm(16, 8, { batchFirst: true, bidirectional: true });

  body(x: Tensor): Tensor {
    return this.lstm.forward(x)[0];
  }
}

/** A convolution over the sequence: each position reads the next one, which a cache cannot give. */
class ConvolutionLM extends TinyLM {
  conv: Layer = nn.conv1d(16, 16, 3, { padding: 1 });

  body(x: Tensor): Tensor {
    return this.conv.forward(x.transpose(1, 2)).transpose(1, 2);
  }
}

/** Causal attention over the last 3 positions (Mistral's sliding window), with learned positions. */
class WindowAttentionLM extends TinyLM {
  positions = nn.embedding(32, 16);
  qkv = nn.linear(16, 48);

  body(x: Tensor): Tensor {
    const [q, k, v] = this.qkv.forward(x.add(this.positions.forward(torch.arange(x.size(1))))).split([16, 16, 16], 2);
    return F.slidingWindowAttention(q, k, v, 3);
  }
}

/** Attention without a causal mask: every position sees the later ones. */
class BidirectionalAttentionLM extends TinyLM {
  qkv = nn.linear(16, 48);

  body(x: Tensor): Tensor {
    const [q, k, v] = this.qkv.forward(x).split([16, 16, 16], 2);
    return F.scaledDotProductAttention(q, k, v);
  }
}

const trainerOf = (model: Module) =>
  new Trainer({
    model,
    loss: 'cross_entropy',
    optimizer: 'adamw',
    config: { progressBar: false, numThreads: 1, seed: 3 },
  });

describe('generate with a key/value cache', function () {
  this.timeout(60_000);
  const prompt = [1, 5, 2, 7];
  const runs: GenerateOptions[] = [
    { maxNewTokens: 12, greedy: true },
    { maxNewTokens: 12, temperature: 1.5, topK: 6, seed: 5 },
  ];

  const sameTokens = async (trainer: Trainer, extra: GenerateOptions = { maxNewTokens: 0 }) => {
    for (const options of runs) {
      const settings = { ...options, ...(extra.maxNewTokens ? extra : {}) };
      const cached = await collect(trainer.generate(prompt, { ...settings, kvCache: true }));
      const full = await collect(trainer.generate(prompt, { ...settings, kvCache: false }));
      expect(cached).to.have.length(settings.maxNewTokens ?? NaN);
      expect(cached, JSON.stringify(settings)).to.deep.equal(full);
      expect(await collect(trainer.generate(prompt, settings)), 'the default uses the cache').to.deep.equal(full);
    }
  };

  it('gives a GPT (causal scaledDotProductAttention, learned positions) the tokens of full forwards', async () => {
    await sameTokens(trainerOf(new GPTMini({ vocab, context: 32 })));
  });

  it('gives a bfloat16 GPT the tokens of full forwards (keys and values read as bfloat16)', async () => {
    const model = new GPTMini({ vocab, context: 32 });
    model.to('bfloat16');
    await sameTokens(trainerOf(model));
  });

  it('slides the window once it is past contextLength, as full forwards do', async () => {
    const trainer = trainerOf(new GPTMini({ vocab, context: 8 }));
    const options = { maxNewTokens: 14, greedy: true, contextLength: 8 };
    expect(await collect(trainer.generate(prompt, { ...options, kvCache: true }))).to.deep.equal(
      await collect(trainer.generate(prompt, { ...options, kvCache: false })),
    );
  });

  it('computes the cache again when the weights change between two tokens (generating during fit)', async () => {
    const data = Dataset.fromTokens(
      Int32Array.from({ length: 64 }, (_, i) => (i * 5) % vocab),
      { contextLength: 8 },
    );
    // A large learning rate and a high temperature: keys from the old weights would change the samples.
    const tokensAround = async (kvCache: boolean) => {
      const model = new GPTMini({ vocab, context: 32 });
      const trainer = new Trainer({
        model,
        loss: 'cross_entropy',
        optimizer: { name: 'adamw', lr: 0.3 },
        config: { progressBar: false, numThreads: 1, seed: 3 },
      });
      const tokens = trainer
        .generate(prompt, { maxNewTokens: 16, temperature: 3, seed: 4, kvCache })
        [Symbol.asyncIterator]();
      const taken: number[] = [];
      for (let i = 0; i < 16; i++) {
        if (i === 4) await trainer.fit(data, { numEpochs: 10 });
        taken.push((await tokens.next()).value as number);
      }
      return taken;
    };
    const full = await tokensAround(false);
    expect(await tokensAround(true)).to.deep.equal(full);
  });

  it('keeps the last window - 1 keys and values of a sliding-window attention, past the window', async () => {
    await sameTokens(trainerOf(new WindowAttentionLM()));
  });

  it('carries recurrent state (LSTM of two layers, GRU) from step to step', async () => {
    await sameTokens(trainerOf(new RecurrentLM()));
  });

  it('keeps multiheadAttention keys and values in a causal transformerEncoder', async () => {
    await sameTokens(trainerOf(new EncoderLM()));
  });

  it('continues a sinusoidal table sliced to the sequence, sequence first', async () => {
    await sameTokens(trainerOf(new SinusoidalEncoderLM()));
  });

  it('decodes an nn.sequential, a traced module like any other, as its full forwards do', async () => {
    // It reads exactly 4 tokens: contextLength 4 crops them.
    const trainer = trainerOf(nn.sequential(nn.embedding(vocab, 4), nn.flatten(), nn.linear(16, vocab)));
    const options = { maxNewTokens: 6, temperature: 1.2, seed: 9, contextLength: 4 };
    const cached = await collect(trainer.generate(prompt, { ...options, kvCache: true }));
    expect(cached).to.deep.equal(await collect(trainer.generate(prompt, { ...options, kvCache: false })));
  });

  it('falls back to full forwards for a model that reads later positions, and kvCache: true says which op', async () => {
    const cases: [Module, string][] = [
      [
        new BidirectionalLM(),
        'generate.kvCache: the model cannot decode from a key/value cache: lstm (lstm) is bidirectional: its backward direction reads the later steps (at ',
      ],
      [
        new BidirectionalAttentionLM(),
        'generate.kvCache: the model cannot decode from a key/value cache: forward: scaledDotProductAttention is not causal: each position sees the later ones (at ',
      ],
      [
        new ConvolutionLM(),
        "generate.kvCache: the model cannot decode from a key/value cache: its logits from the cache differ from a full forward's by ",
      ],
    ];
    for (const [model, message] of cases) {
      const trainer = trainerOf(model);
      const options = {
        maxNewTokens: 6,
        temperature: 1.2,
        seed: 9,
        ...(model instanceof TinyLM ? {} : { contextLength: 4 }),
      };
      const error = await rejectionOf(collect(trainer.generate(prompt, { ...options, kvCache: true })));
      expect(error.code, message).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
      expect(error.message, error.message).to.contain(message);
      expect(error.message).to.contain('Pass kvCache: false, or leave it unset to fall back to full forwards');
      if (model instanceof ConvolutionLM) expect(error.message).to.contain('at token 2');
      expect(await collect(trainer.generate(prompt, options)), model.constructor.name).to.deep.equal(
        await collect(trainer.generate(prompt, { ...options, kvCache: false })),
      );
    }
  });

  it("decodes with the single-query attention kernel's portable and AVX2 versions too (FIREBRAND_CPU_BASELINE)", function () {
    // A child process: the CPU check is made once per process. Each cached step runs the kernel;
    // kvCache: true fails when the first one's logits are not the full forward's.
    const script = `
      const { Trainer } = require(${JSON.stringify(path.join(__dirname, '..', 'src'))});
      const { GPTMini } = require(${JSON.stringify(path.join(__dirname, '..', 'examples', 'models', 'gpt'))});
      (async () => {
        const config = { progressBar: false, numThreads: 1, seed: 3 };
        const trainer = new Trainer({ model: new GPTMini({ vocab: 12, context: 32 }), loss: 'cross_entropy', optimizer: 'sgd', config });
        const tokens = async (kvCache) => {
          const all = [];
          for await (const token of trainer.generate([1, 5, 2, 7], { maxNewTokens: 20, greedy: true, kvCache })) all.push(token);
          return all;
        };
        console.log(JSON.stringify([await tokens(true), await tokens(false)]));
      })();`;
    for (const baseline of ['1', 'avx2']) {
      const [cached, full] = JSON.parse(
        execFileSync(process.execPath, ['-e', script], {
          env: { ...process.env, FIREBRAND_CPU_BASELINE: baseline },
          encoding: 'utf8',
        }).trim(),
      ) as number[][];
      expect(cached, baseline).to.have.length(20);
      expect(cached, baseline).to.deep.equal(full);
    }
  });
});
