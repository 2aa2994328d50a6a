// torch.nn.init.trunc_normal_ as the libtorch built against draws it: PyTorch
// 2.12 replaced the inverse-CDF draw (erfinv of a uniform, which in float32
// puts a few values at the bounds when they are far off) with rejection
// sampling (pytorch/pytorch#174997). Seeded inits equal PyTorch's on both.
#pragma once
#include <ATen/core/Tensor.h>

namespace firebrand {

void truncNormal(at::Tensor& tensor, double mean, double std, double a, double b);

}  // namespace firebrand
