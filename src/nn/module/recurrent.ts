// Recurrent layers as PyTorch has them (torch.nn.LSTM, GRU, RNN): built in C++
// with PyTorch's parameters (weight_ih_l0, weight_hh_l0_reverse, ...), and a
// forward that returns the output and the final state, as PyTorch's does.
import type { GRUSpec, LSTMSpec, RNNSpec } from '../layers';
import { BuiltinLayer } from './module';
import { tensorsOp, type Tensor } from './tensor';
import { activeTrace } from './trace';

/**
 * nn.lstm. forward(input, [h0, c0]?) returns [output, [hN, cN]]: output [N, L, D*H] with batchFirst
 * (else [L, N, D*H]), each state [numLayers*D, N, H] (D = 2 when bidirectional); no state: zeros.
 */
export class LSTM extends BuiltinLayer<LSTMSpec> {
  forward(input: Tensor, hx: [Tensor, Tensor] | null = null): [Tensor, [Tensor, Tensor]] {
    const path = activeTrace(this.type).pathOf(this, this.className);
    const [output, h, c] = tensorsOp('recurrent', 3, path, input, hx?.[0] ?? null, hx?.[1] ?? null);
    return [output, [h, c]];
  }
}

/** nn.rnn (and nn.gru, GRU). forward(input, h0?) returns [output, hN], shaped as LSTM's. */
export class RNN<Spec extends RNNSpec | GRUSpec = RNNSpec> extends BuiltinLayer<Spec> {
  forward(input: Tensor, h0: Tensor | null = null): [Tensor, Tensor] {
    const path = activeTrace(this.type).pathOf(this, this.className);
    const [output, h] = tensorsOp('recurrent', 2, path, input, h0, null);
    return [output, h];
  }
}

/** nn.gru: torch.nn.GRU, with RNN's forward. */
export class GRU extends RNN<GRUSpec> {}
