#include "core/optim/fused_sgd.h"

#include <ATen/ATen.h>

#include "core/optim/sgd_update.h"

namespace firebrand {
namespace {

template <typename T>
void update(const at::Tensor& parameter, const at::Tensor& grad, const at::Tensor* buffer,
            const SgdCoefficients& coefficients) {
  SgdSlice<T> slice;
  slice.parameter = parameter.data_ptr<T>();
  slice.grad = grad.data_ptr<T>();
  slice.momentumBuffer = buffer != nullptr ? buffer->data_ptr<T>() : nullptr;
  slice.size = parameter.numel();
  sgdUpdate(slice, coefficients);
}

}  // namespace

bool FusedSgd::planUpdates() {
  updates_.clear();
  for (auto& group : param_groups()) {
    const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
    for (const auto& parameter : group.params()) {
      const at::Tensor& grad = parameter.grad();
      if (!grad.defined()) continue;
      if (!sameDenseCpuMemory(parameter, grad)) return false;
      const at::Tensor* buffer = nullptr;
      if (options.momentum() != 0) {
        const auto entry = state().find(keys_.of(parameter));
        if (entry != state().end()) {
          buffer = &static_cast<const torch::optim::SGDParamState&>(*entry->second).momentum_buffer();
          if (!buffer->defined() || !sameDenseCpuMemory(parameter, *buffer)) return false;
        }
      }
      updates_.push_back({&parameter, &grad, &options, buffer});
    }
  }
  return true;
}

const at::Tensor& FusedSgd::momentumBuffer(const at::Tensor& parameter, bool& made) {
  // Looked up again: a parameter listed twice got its buffer from its first update.
  auto& entry = state()[keys_.of(parameter)];
  made = entry == nullptr;
  if (made) {
    auto fresh = std::make_unique<torch::optim::SGDParamState>();
    fresh->momentum_buffer(at::empty_like(parameter));
    entry = std::move(fresh);
  }
  return static_cast<const torch::optim::SGDParamState&>(*entry).momentum_buffer();
}

at::Tensor FusedSgd::step(LossClosure closure) {
  // A closure computes the gradients, which must be checked after it runs: libtorch's step runs it.
  if (closure != nullptr || !planUpdates()) return SGD::step(std::move(closure));
  at::NoGradGuard noGrad;
  for (const PendingUpdate& pending : updates_) {
    const torch::optim::SGDOptions& options = *pending.options;
    SgdCoefficients coefficients;
    coefficients.lr = options.lr();
    coefficients.momentum = options.momentum();
    coefficients.dampening = options.dampening();
    coefficients.weightDecay = options.weight_decay();
    coefficients.nesterov = options.nesterov();
    const at::Tensor* buffer = pending.buffer;
    if (options.momentum() != 0 && buffer == nullptr) {
      buffer = &momentumBuffer(*pending.parameter, coefficients.firstMomentumStep);
    }
    if (pending.parameter->scalar_type() == at::kFloat) {
      update<float>(*pending.parameter, *pending.grad, buffer, coefficients);
    } else {
      update<double>(*pending.parameter, *pending.grad, buffer, coefficients);
    }
    // As an in-place op would: autograd refuses a changed tensor it saved.
    pending.parameter->unsafeGetTensorImpl()->bump_version();
  }
  return {};
}

}  // namespace firebrand
