// A recurrent layer (LSTM, GRU, RNN) as ONNX's own LSTM/GRU/RNN nodes, one per
// layer: PyTorch's weights with their gates reordered to ONNX's, lengths as
// sequence_lens (zeros after each sequence's end, its last state where it
// ended, as pack_padded_sequence gives), [output, h_n(, c_n)] as PyTorch returns.
#pragma once
#include <string>

#include "core/nn/layer_onnx.h"
#include "core/options/resolved_options.h"

namespace firebrand {

OnnxValue recurrentOnnx(const std::string& type, ResolvedOptions& options, const OnnxLayerCall& call);

}  // namespace firebrand
