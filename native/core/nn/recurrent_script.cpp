#include "core/nn/recurrent_script.h"

namespace firebrand {

// dtype 4 is int64 (no torch.long in TorchScript compiled without Python).
const char* const kPackedRecurrentMethod = R"(
def _packed_recurrent(self, mode: str, x: Tensor, hx: List[Tensor], params: List[Tensor], lengths: Tensor, has_biases: bool,
                      num_layers: int, dropout: float, bidirectional: bool, batch_first: bool) -> List[Tensor]:
    batch_dim = 0 if batch_first else 1
    steps = x.size(1 if batch_first else 0)
    sorted_lengths, order = torch.sort(lengths.to(torch.device('cpu'), 4), 0, True)
    restore = torch.empty_like(order).scatter_(0, order, torch.arange(0, order.numel(), dtype=4))
    order = order.to(x.device)
    restore = restore.to(x.device)
    packed = torch._pack_padded_sequence(x.index_select(batch_dim, order), sorted_lengths, batch_first)
    data = packed[0]
    batch_sizes = packed[1]
    states: List[Tensor] = [state.index_select(1, order) for state in hx]
    out = data
    finals: List[Tensor] = []
    if mode == 'lstm':
        lstm = torch.lstm(data, batch_sizes, states, params, has_biases, num_layers, dropout, self.training, bidirectional)
        out = lstm[0]
        finals = [lstm[1], lstm[2]]
    elif mode == 'gru':
        gru = torch.gru(data, batch_sizes, states[0], params, has_biases, num_layers, dropout, self.training, bidirectional)
        out = gru[0]
        finals = [gru[1]]
    elif mode == 'rnn_relu':
        relu = torch.rnn_relu(data, batch_sizes, states[0], params, has_biases, num_layers, dropout, self.training, bidirectional)
        out = relu[0]
        finals = [relu[1]]
    else:
        tanh = torch.rnn_tanh(data, batch_sizes, states[0], params, has_biases, num_layers, dropout, self.training, bidirectional)
        out = tanh[0]
        finals = [tanh[1]]
    padded = torch._pad_packed_sequence(out, batch_sizes, batch_first, 0.0, steps)[0]
    result: List[Tensor] = [padded.index_select(batch_dim, restore)]
    for final in finals:
        result.append(final.index_select(1, restore))
    return result
)";

}  // namespace firebrand
