#include "core/nn/frozen_linear.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include "core/compat/torch_compat.h"
#include "core/nn/cpu_float.h"
#include "core/nn/onednn_sgemm.h"
#include "core/runtime/inference_run.h"

namespace firebrand {
namespace {

// y = x W^T; dx = dy W. The weight is saved (no copy) and gets no gradient.
class FrozenLinearFunction : public torch::autograd::Function<FrozenLinearFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& input,
                            const at::Tensor& weight) {
    context->save_for_backward({weight});
    return onednnTimesTransposed(input, weight);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list outputs) {
    const at::Tensor weight = context->get_saved_variables()[0];
    return {onednnTimes(outputs[0].contiguous(), weight), at::Tensor()};
  }
};

bool frozen(const at::Tensor& tensor) { return !tensor.defined() || !tensor.requires_grad(); }

}  // namespace

bool frozenLinearFits(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  const bool recorded = at::GradMode::is_enabled() || GradientsRecordedLater::isSet();
  const bool lowered = !recorded && inInferenceRun();
  if (!onednnSgemmAvailable() || !(recorded || lowered)) return false;
  if (!input.defined() || input.dim() < 1 || input.numel() == 0) return false;
  const bool shapes = weight.dim() == 2 && weight.is_contiguous() && weight.numel() > 0 &&
                      input.size(-1) == weight.size(1) &&
                      (!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0) && isCpuFloat(bias)));
  return shapes && isCpuFloat(input) && isCpuFloat(weight) && (lowered || (frozen(weight) && frozen(bias))) &&
         !compat::autocastEnabled(c10::DeviceType::CPU);
}

at::Tensor frozenLinear(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  const at::Tensor rows = input.reshape({-1, weight.size(1)}).contiguous();
  // Without gradients recorded, the product alone: no autograd node to make.
  at::Tensor out =
      at::GradMode::is_enabled() ? FrozenLinearFunction::apply(rows, weight) : onednnTimesTransposed(rows, weight);
  // In place: the product is this call's own, and adding passes its gradient on unchanged.
  if (bias.defined()) out.add_(bias);
  std::vector<int64_t> shape = input.sizes().vec();
  shape.back() = weight.size(0);
  return out.view(shape);
}

}  // namespace firebrand
