// A float32 linear layer that computes no weight gradient: while training records gradients, one whose
// weight (and bias) take none, as the base layers under LoRA adapters and a frozen head; and every one
// inside a prediction or generation step lowered for inference (predict's default, see
// runtime/inference_run.h). Its output and its input's gradient are oneDNN's products (onednn_sgemm.h);
// nothing is computed for the weight, as with at::linear on a frozen weight. Evaluation in fit and
// predict's optimizeForInference: false run libtorch's linear, so that those outputs stay bit for bit
// the model's TorchScript export's; lowered ones agree with them to float32 rounding.
#pragma once
#include <ATen/core/Tensor.h>

#include "core/runtime/thread_flag.h"

namespace firebrand {

// Whether frozenLinear takes these: oneDNN's sgemm is there, float32 on the CPU, a 2-D weight of
// input's last size, no autocast, and either gradients are recorded (or will be: see below) and the
// weight and bias need none, or none are and this is a lowered inference run.
bool frozenLinearFits(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);

// While a GradientsRecordedLater::Scope lives, on this thread, frozen layers compute as when gradients are
// recorded although they are not: an activation checkpoint's first pass, which its backward recomputes with
// gradients, so that both passes compute alike.
using GradientsRecordedLater = ThreadFlag<struct GradientsRecordedLaterTag>;
// input [*, K] times weight [N, K] transposed plus bias: [*, N], differentiable in input.
at::Tensor frozenLinear(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace firebrand
