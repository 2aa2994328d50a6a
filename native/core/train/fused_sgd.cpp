#include "core/train/fused_sgd.h"

#include <ATen/ATen.h>

#include "core/compat/torch_compat.h"
#include "core/train/sgd_update.h"

namespace firebrand {
namespace {

// Dense CPU memory of float32/float64 that `other` shares element for element (same strides).
bool sameDenseCpuMemory(const at::Tensor& tensor, const at::Tensor& other) {
  return tensor.device().is_cpu() && other.device().is_cpu() && tensor.layout() == at::kStrided &&
         other.layout() == at::kStrided && tensor.scalar_type() == other.scalar_type() &&
         (tensor.scalar_type() == at::kFloat || tensor.scalar_type() == at::kDouble) &&
         tensor.is_non_overlapping_and_dense() && tensor.sizes() == other.sizes() &&
         tensor.strides() == other.strides();
}

template <typename T>
void update(const at::Tensor& parameter, const at::Tensor& grad, const at::Tensor& buffer,
            const SgdCoefficients& coefficients) {
  SgdSlice<T> slice;
  slice.parameter = parameter.data_ptr<T>();
  slice.grad = grad.data_ptr<T>();
  slice.momentumBuffer = buffer.defined() ? buffer.data_ptr<T>() : nullptr;
  slice.size = parameter.numel();
  sgdUpdate(slice, coefficients);
}

}  // namespace

bool FusedSgd::fusable() {
  for (auto& group : param_groups()) {
    const bool momentum = static_cast<const torch::optim::SGDOptions&>(group.options()).momentum() != 0;
    for (const auto& parameter : group.params()) {
      const at::Tensor& grad = parameter.grad();
      if (!grad.defined()) continue;
      if (!sameDenseCpuMemory(parameter, grad)) return false;
      if (!momentum) continue;
      const auto entry = state().find(compat::optimizerStateKey(parameter));
      if (entry == state().end()) continue;
      const auto& buffer = static_cast<const torch::optim::SGDParamState&>(*entry->second).momentum_buffer();
      if (!buffer.defined() || !sameDenseCpuMemory(parameter, buffer)) return false;
    }
  }
  return true;
}

at::Tensor FusedSgd::momentumBuffer(const at::Tensor& parameter, bool& made) {
  const auto key = compat::optimizerStateKey(parameter);
  const auto entry = state().find(key);
  made = entry == state().end();
  if (!made) return static_cast<torch::optim::SGDParamState&>(*entry->second).momentum_buffer();
  auto fresh = std::make_unique<torch::optim::SGDParamState>();
  fresh->momentum_buffer(at::empty_like(parameter));
  at::Tensor buffer = fresh->momentum_buffer();
  state()[key] = std::move(fresh);
  return buffer;
}

at::Tensor FusedSgd::step(LossClosure closure) {
  if (!fusable()) return SGD::step(std::move(closure));
  at::NoGradGuard noGrad;
  at::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enableGrad(true);
    loss = closure();
  }
  for (auto& group : param_groups()) {
    const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
    SgdCoefficients coefficients;
    coefficients.lr = options.lr();
    coefficients.momentum = options.momentum();
    coefficients.dampening = options.dampening();
    coefficients.weightDecay = options.weight_decay();
    coefficients.nesterov = options.nesterov();
    for (auto& parameter : group.params()) {
      const at::Tensor& grad = parameter.grad();
      if (!grad.defined()) continue;
      at::Tensor buffer;
      if (coefficients.momentum != 0) buffer = momentumBuffer(parameter, coefficients.firstMomentumStep);
      if (parameter.scalar_type() == at::kFloat) {
        update<float>(parameter, grad, buffer, coefficients);
      } else {
        update<double>(parameter, grad, buffer, coefficients);
      }
      // As an in-place op would: autograd refuses a changed tensor it saved.
      parameter.unsafeGetTensorImpl()->bump_version();
    }
  }
  return loss;
}

}  // namespace firebrand
