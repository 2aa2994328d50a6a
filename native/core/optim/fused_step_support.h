// What the fused optimizer steps (fused_sgd.h, fused_adam.h) share: which
// tensors a one-pass update can take, and parameters' state keys made once.
#pragma once
#include <ATen/core/Tensor.h>

#include <functional>
#include <unordered_map>

#include "core/compat/torch_compat.h"

namespace firebrand {

// Dense CPU memory of float32/float64 that `other` shares element for element (same dtype and strides).
bool sameDenseCpuMemory(const at::Tensor& tensor, const at::Tensor& other);

// An optimizer whose state can be made before its first step, so that the memory is faulted in at
// setup rather than inside the first step (each 4 KB page costs microseconds on some VMs).
class StateMadeAhead {
 public:
  virtual ~StateMadeAhead() = default;
  // Makes the state of each parameter that requires a gradient, has none yet and `wanted` accepts (as its
  // first step would).
  virtual void makeState(const std::function<bool(const at::Tensor&)>& wanted) = 0;
};

// Keys of parameters' entries in an optimizer's state(), made once per parameter (1.13's are formatted text).
class OptimizerStateKeys {
 public:
  const compat::OptimizerStateKey& of(const at::Tensor& parameter);

 private:
  std::unordered_map<const c10::TensorImpl*, compat::OptimizerStateKey> keys_;
};

}  // namespace firebrand
