// What the fused optimizer steps (fused_sgd.h, fused_adam.h) share: which
// tensors a one-pass update can take, and parameters' state keys made once.
#pragma once
#include <ATen/core/Tensor.h>

#include <unordered_map>

#include "core/compat/torch_compat.h"

namespace firebrand {

// Dense CPU memory of float32/float64 that `other` shares element for element (same dtype and strides).
bool sameDenseCpuMemory(const at::Tensor& tensor, const at::Tensor& other);

// Keys of parameters' entries in an optimizer's state(), made once per parameter (1.13's are formatted text).
class OptimizerStateKeys {
 public:
  const compat::OptimizerStateKey& of(const at::Tensor& parameter);

 private:
  std::unordered_map<const c10::TensorImpl*, compat::OptimizerStateKey> keys_;
};

}  // namespace firebrand
