// torch::nn's LSTM, GRU and RNN as built-in layers: built from their resolved
// specs with PyTorch's parameter names and initialisation, and run on an input
// and an optional initial state, giving the output and each final state.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/nn/layer_factory.h"
#include "core/options/resolved_options.h"

namespace firebrand {

BuiltLayer buildLstm(ResolvedOptions& options);
BuiltLayer buildGru(ResolvedOptions& options);
BuiltLayer buildRnn(ResolvedOptions& options);

// {output, h_n} (GRU, RNN) or {output, h_n, c_n} (LSTM). An LSTM takes both of h0 and c0 or neither.
// With `lengths` ([N], each sequence's valid steps), the padding after them is skipped as PyTorch's
// pack_padded_sequence skips it: the final states are each sequence's last valid step's, the output
// there is zeros. A failure names `owner`, the shapes it got and the input it takes.
std::vector<at::Tensor> runRecurrent(BuiltLayer& layer, const at::Tensor& input, const c10::optional<at::Tensor>& h0,
                                     const c10::optional<at::Tensor>& c0, const c10::optional<at::Tensor>& lengths,
                                     const std::string& owner);

}  // namespace firebrand
