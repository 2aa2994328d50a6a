// torch.nn.MultiheadAttention as a built-in layer: libtorch's module for
// PyTorch's parameters (in_proj_weight, in_proj_bias, out_proj) and their
// initialisation, and PyTorch's multi_head_attention_forward over them, with
// its mask conventions (true in attn_mask or key_padding_mask: left out).
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/nn/layer_factory.h"
#include "core/options/resolved_options.h"

namespace firebrand {

BuiltLayer buildMultiheadAttention(ResolvedOptions& options);

struct AttentionCall {
  c10::optional<at::Tensor> keyPaddingMask;  // [N, S]
  c10::optional<at::Tensor> attnMask;        // [L, S] or [N * numHeads, L, S]
  bool needWeights = false;
  bool averageAttnWeights = true;
  bool isCausal = false;  // masks each query's later keys (with attnMask, both apply)
  // Incremental decoding of causal self-attention: the earlier positions' projected keys and
  // values (extendKeysValues), or null.
  std::vector<at::Tensor>* cache = nullptr;
};

// {output} or {output, weights}: output as the query ([N, L, E] with batchFirst, else [L, N, E]),
// weights [N, L, S] averaged over heads or [N, numHeads, L, S]. A failure names `owner` and the shapes.
std::vector<at::Tensor> runMultiheadAttention(BuiltLayer& layer, bool batchFirst, const at::Tensor& query,
                                              const at::Tensor& key, const at::Tensor& value, const AttentionCall& call,
                                              bool training, const std::string& owner);

}  // namespace firebrand
