// Float32 linear layers on the CPU through oneDNN's inner product (libtorch's own
// mkldnn::_linear_pointwise, registered by libtorch 2.x), forward and backward.
// PyTorch eager sends a float32 linear to the BLAS (OpenBLAS on Debian); oneDNN's
// AVX-512 kernels run it ~1.8x faster on CPUs that have AVX-512, and as fast on
// AVX2-only ones. libtorch 1.13 lacks the op (its mkldnn_linear needs weights
// converted ahead, a copy per layer): there linear layers keep at::linear.
#pragma once
#include <ATen/core/Tensor.h>

namespace firebrand {

// Whether this libtorch has the op, and FIREBRAND_LINEAR_BACKEND does not say "blas".
bool onednnLinearAvailable();
// Whether onednnLinear takes these: float32 CPU input and weight (strided), any leading dims, no
// CPU autocast.
bool onednnLinearFits(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);
// input @ weight.T + bias, differentiable in all three (first derivatives: nothing in firebrand
// differentiates twice).
at::Tensor onednnLinear(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace firebrand
