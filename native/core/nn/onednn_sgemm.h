// float32 matrix products through oneDNN's sgemm (dnnl_sgemm, part of oneDNN's C API since 1.0), the
// library libtorch convolves with, where that libtorch links one that exports it (Debian's do; pip
// wheels carry theirs hidden inside). On the products of a language model's frozen linear layers it ran
// 1.02-1.06x OpenBLAS's sgemm forward and 1.15-1.19x for the input gradient, both on their AVX-512
// kernels (docs/performance.md). FIREBRAND_ONEDNN_SGEMM=0 keeps every product on libtorch's own.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace firebrand {

// Whether the products below run: oneDNN's sgemm was found and FIREBRAND_ONEDNN_SGEMM is not 0.
bool onednnSgemmAvailable();
// Products the two below have computed in this process.
int64_t onednnSgemmProducts();

// rows [M, K] times weight [N, K] transposed: [M, N]. Both float32, contiguous, on the CPU.
at::Tensor onednnTimesTransposed(const at::Tensor& rows, const at::Tensor& weight);
// rows [M, N] times weight [N, K]: [M, K]. Both float32, contiguous, on the CPU.
at::Tensor onednnTimes(const at::Tensor& rows, const at::Tensor& weight);

}  // namespace firebrand
