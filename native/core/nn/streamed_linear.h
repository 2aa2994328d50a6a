// A linear layer on a few rows that reads its weight from memory once: decoding's
// matrix-vector products, where time is the weight's bytes over memory bandwidth.
// BLAS's gemm packs the whole weight for one row and its gemv reaches about half
// the bandwidth on AVX2/AVX-512 CPUs; this kernel reads each weight row once, front
// to back, against every input row, widening bfloat16 and int8 weights in registers,
// so that bfloat16 reads half the bytes of float32 and int8 a quarter.
#pragma once
#include <ATen/core/Tensor.h>

namespace firebrand {

// The most rows a layer sends through streamedLinear: one, a decoding step's. Several rows keep
// at::linear's bits, which TorchScript, transformers and the tests compare to bit for bit. (The
// kernel takes up to eight: each weight row is read from memory once, from cache for the others.)
constexpr int64_t kStreamedRowsMax = 1;

// rows [B, K] (float or bfloat16) times weight [N, K] (float, bfloat16, or int8 with scale [N] float:
// the weight is values * scale per output row), plus bias [N] when defined: [B, N] in rows' dtype,
// accumulated in float. Runs over the intra-op threads; no autograd.
at::Tensor streamedLinear(const at::Tensor& rows, const at::Tensor& weight, const at::Tensor& scale,
                          const at::Tensor& bias);

// streamedLinear's kernel on float32 rows x [B, K] into float32 out [B, N]: scale (int8 weights) and bias
// float32 [N] or null. For callers that keep their own rows (nn/llama_decode_layer).
void streamedRows(const at::Tensor& weight, const float* scale, const float* bias, const float* x, int64_t B,
                  float* out);

// Whether streamedLinear takes these operands: in a prediction or generation (runtime/inference_run.h),
// on the CPU, without autograd, at most kStreamedRowsMax rows, a weight of a kind it reads.
bool streamedLinearFits(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace firebrand
