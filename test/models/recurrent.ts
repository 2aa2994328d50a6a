// Recurrent models written as TypeScript modules: the same classes as
// LSTMClassifier, GRURegressor and PackedRecurrent in scripts/make-module-fixtures.py.
import { nn, Tensor, torch } from '../../src';

/** Tokens through a 2-layer bidirectional LSTM; the last layer's final states of both directions classify. */
export class LSTMClassifier extends nn.Module {
  embed = nn.embedding(12, 8);
  lstm = nn.lstm(8, 6, { numLayers: 2, batchFirst: true, bidirectional: true });
  head = nn.linear(12, 3);

  forward(tokens: Tensor): Tensor {
    const [out, [h, c]] = this.lstm.forward(this.embed.forward(tokens));
    const last = torch.cat([h.select(0, -2), h.select(0, -1)], 1);
    return this.head.forward(last.add(out.mean(1)).add(c.select(0, -1).sum(1, true)));
  }
}

/** A GRU over [L, N, features] from an initial state made of the input, and a relu RNN after it. */
export class GRURegressor extends nn.Module {
  init = nn.linear(5, 7);
  gru = nn.gru(5, 7);
  rnn = nn.rnn(7, 7, { nonlinearity: 'relu', numLayers: 2 });
  head = nn.linear(7, 3);

  /** x: [N, L, features]. */
  forward(x: Tensor): Tensor {
    const h0 = this.init.forward(x.mean(1)).tanh().unsqueeze(0);
    const [out, h] = this.gru.forward(x.transpose(0, 1), h0);
    const [deep] = this.rnn.forward(out);
    return this.head.forward(deep.mean(0).add(h.select(0, 0)));
  }
}

/** Variable-length sequences (each one's length from its first token): a bidirectional batch-first LSTM and a sequence-first GRU. */
export class PackedRecurrent extends nn.Module {
  embed = nn.embedding(12, 6);
  lstm = nn.lstm(6, 5, { batchFirst: true, bidirectional: true });
  gru = nn.gru(10, 5);
  head = nn.linear(15, 3);

  forward(tokens: Tensor): Tensor {
    const first = tokens.select(1, 0);
    const steps = torch.arange(tokens.size(1)).select(0, -1).add(1);
    const lengths = steps.sub(first.gt(5).long()).sub(first.gt(9).long());
    const [out, [h]] = this.lstm.forward(this.embed.forward(tokens), null, { lengths });
    const [deep, last] = this.gru.forward(out.transpose(0, 1), null, { lengths });
    return this.head.forward(torch.cat([h.select(0, 0).add(h.select(0, 1)), last.select(0, 0), deep.sum(0)], 1));
  }
}
