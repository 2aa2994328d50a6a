// TorchScript for the multiheadAttention nodes of an exported graph: one
// method that computes what nn/attention_layer.cpp does, in the same order,
// and each node's call of it.
#pragma once
#include <string>
#include <vector>

#include "core/nn/layer_spec.h"
#include "core/nn/script_text.h"

namespace firebrand {

// The method's source, added once to a module that calls it.
extern const char* const kMultiheadAttentionMethod;

// The call of the layer whose tensors `tensor` names; `args` are the node's operands as TorchScript expressions
// (query, key, value, keyPaddingMask, attnMask, needWeights, averageAttnWeights, isCausal).
std::string multiheadAttentionCall(const LayerSpec& spec, const ScriptTensor& tensor, const std::vector<std::string>& args);

}  // namespace firebrand
