// A bidirectional LSTM classifying token sequences of different lengths: which
// of three letters each sequence holds most often. The padding after each
// sequence is skipped, as PyTorch's pack_padded_sequence skips it.
//   npm run build:ts && node dist/examples/lstm-classifier.js   (EXAMPLE_EPOCHS, default 8)
// In your project, import from 'firebrand' instead of '../src'.
import { Dataset, nn, Tensor, torch, Trainer } from '../src';
import { exampleSize } from './shared/example-size';
import { seededRandom } from './shared/seeded-random';

const maxLength = 24;

/** Token ids (1-3 the letters that count, 4-9 noise, 0 padding), each sequence's length, and the letter it holds most. */
function sequences(count: number, seed: number): Dataset {
  const random = seededRandom(seed);
  const input = new BigInt64Array(count * maxLength);
  const lengths = new BigInt64Array(count);
  const target = new Int32Array(count);
  for (let n = 0; n < count; n += 1) {
    const length = 6 + Math.floor(random() * (maxLength - 5));
    const counts = [0, 0, 0];
    for (let t = 0; t < length; t += 1) {
      const token = 1 + Math.floor(random() * 9);
      if (token <= 3) counts[token - 1] += 1;
      input[n * maxLength + t] = BigInt(token);
    }
    // The class: the most frequent letter (ties to the first).
    target[n] = counts.indexOf(Math.max(...counts));
    lengths[n] = BigInt(length);
  }
  return Dataset.fromFields({
    input: { data: input, shape: [count, maxLength] },
    lengths: { data: lengths, shape: [count] },
    target: { data: target, shape: [count] },
  });
}

/** Each sequence's tokens as text, to count repeats. */
function sequenceKeys(data: Dataset): string[] {
  const { input, lengths } = data.fields();
  const tokens = input.data as BigInt64Array;
  return Array.from(lengths.data as BigInt64Array, (length, n) =>
    tokens.subarray(n * maxLength, n * maxLength + Number(length)).join(','),
  );
}

class Classifier extends nn.Module {
  embed = nn.embedding(10, 16, { paddingIdx: 0 });
  lstm = nn.lstm(16, 32, { batchFirst: true, bidirectional: true });
  head = nn.linear(64, 3);

  override inputFields(): string[] {
    return ['input', 'lengths'];
  }

  forward(tokens: Tensor, lengths: Tensor): Tensor {
    const [, [h]] = this.lstm.forward(this.embed.forward(tokens), null, { lengths });
    // The final states of both directions, each from its sequence's own last step.
    return this.head.forward(torch.cat([h.select(0, 0), h.select(0, 1)], 1));
  }
}

async function main(): Promise<void> {
  const epochs = exampleSize('EXAMPLE_EPOCHS', 8);
  const trainer = new Trainer({
    model: new Classifier(),
    loss: 'cross_entropy',
    optimizer: { name: 'adamw', lr: 1e-2 },
    config: { numEpochs: epochs, batchSize: 64, logEvery: 20 },
  });
  const [train, validation] = [sequences(3000, 1), sequences(500, 2)];
  const trainKeys = new Set(sequenceKeys(train));
  const seen = sequenceKeys(validation).filter((key) => trainKeys.has(key)).length;
  console.log(
    `${trainKeys.size} of ${train.length} training sequences distinct; ${seen} of ${validation.length} validation sequences also train`,
  );
  const history = await trainer.fit(train, { evalData: validation });
  const last = history.epochs[history.epochs.length - 1];
  console.log(`validation accuracy ${last.valAccuracy?.toFixed(4)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
