// A frozen float32 linear layer's output through oneDNN 3's matmul, reading the weight where it lies: no
// packed copy kept (that would double a frozen base's memory), the kernels copying the blocks they need as
// they go. On LoRA's products (128 rows) it ran 179-200 GFLOP/s against 158-175 through oneDNN's sgemm on
// TinyLlama-1.1B's shapes, and 179-186 against 140-143 on SmolLM2-135M's 576 -> 1536, on this project's
// machine; the input gradient stays on the sgemm, as fast or faster there (docs/performance.md).
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace firebrand {

// rows [M, K] times weight [N, K] transposed: [M, N] (both float32, contiguous, on the CPU); undefined where
// there is no oneDNN 3 matmul (onednn::matmulApi()), the product is too small to gain, or oneDNN refuses it.
at::Tensor onednnPlainTimesTransposed(const at::Tensor& rows, const at::Tensor& weight);

// Products computed so (runtimeInfo().onednnPlainMatmulProducts).
int64_t onednnPlainMatmulProducts();

}  // namespace firebrand
