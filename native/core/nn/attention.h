// Scaled dot-product attention as PyTorch defines it (the reference formula of
// torch.nn.functional.scaled_dot_product_attention), in plain aten ops so that
// every libtorch version computes the same numbers; inside a prediction or a
// generation step, a fused kernel (inference_attention.h, or PyTorch's own),
// equal to the formula to float32 rounding.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>
#include <utility>
#include <vector>

namespace firebrand {

// softmax(q kᵀ · scale + mask) v over the last two dimensions. A boolean `mask` keeps the
// positions that are true; a floating one is added. `isCausal` keeps key positions up to each
// query's. Dropout of `dropoutP` applies to the weights while `training`.
at::Tensor scaledDotProductAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                     const c10::optional<at::Tensor>& mask, double dropoutP, bool isCausal,
                                     std::optional<double> scale, bool training);

// Incremental decoding: `key` and `value` appended (along dim -2) to the earlier positions' in
// `entry` ({keys, values}, empty at the first step), which then holds all of them.
std::pair<at::Tensor, at::Tensor> extendKeysValues(std::vector<at::Tensor>& entry, const at::Tensor& key,
                                                   const at::Tensor& value);

// Which keys each query may see under a causal mask, [queries, keys]: the last query is the last
// key's position (the queries are the newest positions; with as many of each, the plain triangle).
at::Tensor causalKeep(int64_t queries, int64_t keys, const at::TensorOptions& options);

// Which keys each query may see when it sees its last `window` positions, itself included
// (transformers' sliding_window), the queries being the newest positions as in causalKeep.
at::Tensor windowKeep(int64_t queries, int64_t keys, int64_t window, const at::TensorOptions& options);

// Causal scaledDotProductAttention of the newest positions' queries over every position's keys and
// values: the earlier ones kept in `entry` (extendKeysValues) and their own. A `mask` over all of
// those keys ([..., queries, keys]: a padded batch's) takes the causal one's place. No dropout (inference).
at::Tensor cachedCausalAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                 const c10::optional<at::Tensor>& mask, std::optional<double> scale,
                                 std::vector<at::Tensor>& entry);

// cachedCausalAttention with each query seeing its last `window` positions. `entry` then keeps the
// last window - 1 positions only, all that the next position sees.
at::Tensor cachedWindowAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                 int64_t window, std::optional<double> scale, std::vector<at::Tensor>& entry);

}  // namespace firebrand
