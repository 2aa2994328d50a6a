// A float32 linear layer whose weight (and bias) take no gradient, as the base layers under LoRA
// adapters and a frozen head: its output and its input's gradient are oneDNN's products
// (onednn_sgemm.h); nothing is computed for the weight, as with at::linear on a frozen weight.
#pragma once
#include <ATen/core/Tensor.h>

namespace firebrand {

// Whether frozenLinear takes these: oneDNN's sgemm is there, float32 on the CPU, a 2-D weight of
// input's last size that needs no gradient (nor the bias), and no autocast.
bool frozenLinearFits(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);
// input [*, K] times weight [N, K] transposed plus bias: [*, N], differentiable in input.
at::Tensor frozenLinear(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace firebrand
