// TorchScript for the multiheadAttention nodes of an exported graph: one
// method that computes what nn/attention_layer.cpp does, in the same order,
// and each node's call of it.
#pragma once
#include "core/nn/script_text.h"
#include "core/options/resolved_options.h"

namespace firebrand {

// The layer's call of _multihead_attention (its source is the call's method); the context's operands
// are query, key, value, keyPaddingMask, attnMask, needWeights, averageAttnWeights, isCausal.
ScriptCall multiheadAttentionScript(ResolvedOptions& options, const LayerScriptContext& context);

}  // namespace firebrand
