// Whether a tensor is float32 on the CPU: what the hand-written kernels and the oneDNN layers take.
#pragma once
#include <ATen/core/Tensor.h>

namespace firebrand {

inline bool isCpuFloat(const at::Tensor& t) { return t.scalar_type() == at::kFloat && t.device().is_cpu(); }

}  // namespace firebrand
