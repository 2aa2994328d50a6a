// Recurrent layers as PyTorch has them (torch.nn.LSTM, GRU, RNN): built in C++
// with PyTorch's parameters (weight_ih_l0, weight_hh_l0_reverse, ...), and a
// forward that returns the output and the final state, as PyTorch's does.
import type { GRUSpec, LSTMSpec, RNNSpec } from '../layer-specs';
import { BuiltinLayer } from './module';
import { tensorsOp, type Tensor } from './tensor';
import { activeTrace } from './trace';

export interface RecurrentOptions {
  /**
   * [N]: each sequence's number of valid steps; the padding after them is skipped, as PyTorch's
   * pack_padded_sequence (enforce_sorted=false) skips it: the final states are each sequence's
   * last valid step's, and the output is zero in the padding.
   */
  lengths?: Tensor | null;
}

/**
 * nn.lstm. forward(input, [h0, c0]?, { lengths }?) returns [output, [hN, cN]]: output [N, L, D*H] with
 * batchFirst (else [L, N, D*H]), each state [numLayers*D, N, H] (D = 2 when bidirectional); no state: zeros.
 */
export class LSTM extends BuiltinLayer<LSTMSpec> {
  forward(
    input: Tensor,
    hx: [Tensor, Tensor] | null = null,
    { lengths = null }: RecurrentOptions = {},
  ): [Tensor, [Tensor, Tensor]] {
    const path = activeTrace(this.type).pathOf(this, this.className);
    const [output, h, c] = tensorsOp('recurrent', 3, path, input, hx?.[0] ?? null, hx?.[1] ?? null, lengths);
    return [output, [h, c]];
  }
}

/** nn.rnn (and nn.gru, GRU). forward(input, h0?, { lengths }?) returns [output, hN], shaped as LSTM's. */
export class RNN<Spec extends RNNSpec | GRUSpec = RNNSpec> extends BuiltinLayer<Spec> {
  forward(input: Tensor, h0: Tensor | null = null, { lengths = null }: RecurrentOptions = {}): [Tensor, Tensor] {
    const path = activeTrace(this.type).pathOf(this, this.className);
    const [output, h] = tensorsOp('recurrent', 2, path, input, h0, null, lengths);
    return [output, h];
  }
}

/** nn.gru: torch.nn.GRU, with RNN's forward. */
export class GRU extends RNN<GRUSpec> {}
