#include "core/nn/linear_layer.h"

#include <ATen/ATen.h>

#include "core/compat/torch_compat.h"

namespace firebrand {
namespace {

bool oneRowAtInference(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  return !at::GradMode::is_enabled() && input.dim() >= 1 && weight.dim() == 2 && input.numel() == weight.size(1) &&
         input.size(-1) == weight.size(1) && input.device().is_cpu() && weight.device().is_cpu() &&
         input.scalar_type() == weight.scalar_type() &&
         (!bias.defined() || bias.scalar_type() == weight.scalar_type()) &&
         !compat::autocastEnabled(c10::DeviceType::CPU);
}

}  // namespace

at::Tensor linearForward(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  if (!oneRowAtInference(input, weight, bias)) return at::linear(input, weight, bias);
  const at::Tensor row = input.reshape({-1});
  const at::Tensor output = bias.defined() ? at::addmv(bias, weight, row) : at::mv(weight, row);
  std::vector<int64_t> shape = input.sizes().vec();
  shape.back() = weight.size(0);
  return output.view(shape);
}

}  // namespace firebrand
