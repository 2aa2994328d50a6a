#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>

#include "core/graph/fused_activation.h"
#include "core/graph/onednn_primitive.h"

namespace firebrand {

// A float32 linear layer at inference for one row count, run as oneDNN 3's matmul: the weight reordered once
// into the blocked layout its kernels read (oneDNN's sgemm and libtorch's BLAS pack it again at every call),
// and the bias and an activation after it applied as each output block is stored. GPT-mini's batch-1 predict
// ran its products at ~170 GFLOP/s so, against ~120 through the sgemm (docs/performance.md).
class OnednnLinear : public OnednnPrimitive {
 public:
  // The layer for `rows` rows of weight [out, in] (and bias [out]) then `activation`, or null where there is
  // no oneDNN 3 matmul here (onednn::matmulApi()) or oneDNN refuses it. `sibling`, the same layer made for
  // another row count, lends its packed weight where the layouts agree.
  static std::unique_ptr<OnednnLinear> make(int64_t rows, const at::Tensor& weight, const at::Tensor& bias,
                                            FusedActivation activation, const OnednnLinear* sibling = nullptr);

  // [rows, out] from dense rows [rows, in] of the count this was made for.
  at::Tensor run(const at::Tensor& rows);

 private:
  OnednnLinear() = default;
  int64_t outFeatures_ = 0;
};

// Products OnednnLinear has computed in this process (runtimeInfo().onednnMatmulProducts).
int64_t onednnMatmulProducts();

}  // namespace firebrand
