// A float32 linear layer whose weight (and bias) take no gradient, as the base layers under LoRA
// adapters and a frozen head, while training records gradients: its output and its input's gradient
// are oneDNN's products (onednn_sgemm.h); nothing is computed for the weight, as with at::linear on a
// frozen weight. Outside training (predict, evaluation) libtorch's linear runs, so that a model's
// outputs stay bit for bit those of its TorchScript export and of its reloaded checkpoint.
#pragma once
#include <ATen/core/Tensor.h>

namespace firebrand {

// Whether frozenLinear takes these: oneDNN's sgemm is there, gradients are recorded (or will be: see
// below), float32 on the CPU, a 2-D weight of input's last size that needs no gradient (nor the bias),
// and no autocast.
bool frozenLinearFits(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);

// Within it, on this thread, frozen layers compute as when gradients are recorded although they are
// not: an activation checkpoint's first pass, which its backward recomputes with gradients, so that both
// passes compute alike.
class GradientsRecordedLaterScope {
 public:
  GradientsRecordedLaterScope();
  ~GradientsRecordedLaterScope();
  GradientsRecordedLaterScope(const GradientsRecordedLaterScope&) = delete;
  GradientsRecordedLaterScope& operator=(const GradientsRecordedLaterScope&) = delete;

 private:
  bool previous_;
};
// input [*, K] times weight [N, K] transposed plus bias: [*, N], differentiable in input.
at::Tensor frozenLinear(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace firebrand
