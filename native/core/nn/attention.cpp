#include "core/nn/attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace firebrand {

at::Tensor scaledDotProductAttention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                     const c10::optional<at::Tensor>& mask, double dropoutP, bool isCausal,
                                     std::optional<double> scale, bool training) {
  const double factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  at::Tensor weights = at::matmul(query, key.transpose(-2, -1)) * factor;
  const double blocked = -std::numeric_limits<double>::infinity();
  if (isCausal) {
    const auto sizes = at::TensorOptions().dtype(at::kBool).device(query.device());
    weights = weights.masked_fill(at::ones({query.size(-2), key.size(-2)}, sizes).tril().logical_not(), blocked);
  }
  if (mask) weights = mask->scalar_type() == at::kBool ? weights.masked_fill(mask->logical_not(), blocked) : weights + *mask;
  weights = at::softmax(weights, -1);
  if (dropoutP > 0) weights = at::dropout(weights, dropoutP, training);
  return at::matmul(weights, value);
}

}  // namespace firebrand
