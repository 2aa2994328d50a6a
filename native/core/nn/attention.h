// Scaled dot-product attention as PyTorch defines it (the reference formula of
// torch.nn.functional.scaled_dot_product_attention), in plain aten ops so that
// every libtorch version computes the same numbers.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>

namespace firebrand {

// softmax(q kᵀ · scale + mask) v over the last two dimensions. A boolean `mask` keeps the
// positions that are true; a floating one is added. `isCausal` keeps key positions up to each
// query's. Dropout of `dropoutP` applies to the weights while `training`.
at::Tensor scaledDotProductAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                     const c10::optional<at::Tensor>& mask, double dropoutP, bool isCausal,
                                     std::optional<double> scale, bool training);

}  // namespace firebrand
