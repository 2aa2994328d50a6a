// The multiheadAttention layer as ONNX ops: the in-projection's thirds, heads
// split and attended with PyTorch's masks (true in attnMask or keyPaddingMask:
// left out; float masks added), then the out-projection, as
// nn/attention_layer.cpp computes it.
#pragma once
#include "core/nn/layer_onnx.h"
#include "core/options/resolved_options.h"

namespace firebrand {

// The call's operands are query, key, value, keyPaddingMask, attnMask, needWeights,
// averageAttnWeights, isCausal; it gives [output] or [output, weights].
OnnxValue multiheadAttentionOnnx(ResolvedOptions& options, const OnnxLayerCall& call);

}  // namespace firebrand
