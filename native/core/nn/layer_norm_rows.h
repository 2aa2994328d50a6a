// LayerNorm over each row's last dimension at inference (a lowered predict's layers, layer_norm_lowering.h),
// float32 on the CPU where it has AVX2 (16 columns a step where it has AVX-512, 8 elsewhere): per row one pass to the
// mean, one to the variance and one to the output, the row in cache throughout. libtorch's native_layer_norm, which
// also writes each row's mean and inverse deviation out, took ~12 us on GPT-mini's [128, 128] (libtorch 2.14); this
// takes ~1.
#pragma once
#include <ATen/core/Tensor.h>

namespace firebrand {

// Whether layerNormRows takes these: the CPU has AVX2 and FMA (runtime/cpu_features.h), gradients are not recorded, a
// float32 CPU input normalized over its last dimension alone (`normalizedSize` its size), and a weight and bias of
// that size or none.
bool layerNormRowsFits(const at::Tensor& input, int64_t normalizedSize, const at::Tensor& weight,
                       const at::Tensor& bias);

// (x - mean) / sqrt(var + eps) * weight + bias over each row of the last dimension, as F.layer_norm computes it
// (the biased variance), without autograd.
at::Tensor layerNormRows(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias, double eps);

}  // namespace firebrand
