// TorchScript for a recurrent layer called with lengths: one method that does
// what PyTorch's pack_padded_sequence(enforce_sorted=False), the packed
// LSTM/GRU/RNN and pad_packed_sequence do (and nn/recurrent_layers.cpp runs),
// in aten calls every PyTorch has.
#pragma once

namespace firebrand {

// The method's source, added once to a module that calls it: _packed_recurrent(mode, x, hx,
// params, lengths, has_biases, num_layers, dropout, bidirectional, batch_first) -> [output, h_n(, c_n)].
extern const char* const kPackedRecurrentMethod;

}  // namespace firebrand
