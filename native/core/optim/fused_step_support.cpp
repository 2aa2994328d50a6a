#include "core/optim/fused_step_support.h"

namespace firebrand {

bool sameDenseCpuMemory(const at::Tensor& tensor, const at::Tensor& other) {
  return tensor.device().is_cpu() && other.device().is_cpu() && tensor.layout() == at::kStrided &&
         other.layout() == at::kStrided && tensor.scalar_type() == other.scalar_type() &&
         (tensor.scalar_type() == at::kFloat || tensor.scalar_type() == at::kDouble) &&
         tensor.is_non_overlapping_and_dense() && tensor.sizes() == other.sizes() &&
         tensor.strides() == other.strides();
}

const compat::OptimizerStateKey& OptimizerStateKeys::of(const at::Tensor& parameter) {
  const auto known = keys_.find(parameter.unsafeGetTensorImpl());
  if (known != keys_.end()) return known->second;
  return keys_.emplace(parameter.unsafeGetTensorImpl(), compat::optimizerStateKey(parameter)).first->second;
}

}  // namespace firebrand
