// TorchScript for a recurrent layer called with lengths: one method that does
// what PyTorch's pack_padded_sequence(enforce_sorted=False), the packed
// LSTM/GRU/RNN and pad_packed_sequence do (and nn/recurrent_layers.cpp runs),
// in aten calls every PyTorch has.
#pragma once
#include <string>

#include "core/nn/script_text.h"
#include "core/options/resolved_options.h"

namespace firebrand {

// The LSTM, GRU or RNN (`type`) applied to the context's operands x, h0 and c0 ("None": zeros) and
// lengths ("None": every step; else a call of _packed_recurrent, the call's method). It returns
// [output, h_n(, c_n)].
ScriptCall recurrentScript(const std::string& type, ResolvedOptions& options, const LayerScriptContext& context);

}  // namespace firebrand
