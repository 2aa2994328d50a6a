#include "core/train/grad_scaler.h"

#include <ATen/ATen.h>

#include <limits>

#include "core/errors.h"

namespace firebrand {

GradScaler::GradScaler(const GradScalerOptions& options) : options_(options) { to(c10::Device(c10::kCPU)); }

void GradScaler::to(const c10::Device& device) {
  scale_ = at::full({1}, options_.initScale, at::TensorOptions().dtype(at::kFloat).device(device));
  growthTracker_ = at::zeros({1}, at::TensorOptions().dtype(at::kInt).device(device));
}

at::Tensor GradScaler::scale(const at::Tensor& loss) const {
  return options_.enabled ? loss * scale_.to(loss.scalar_type()) : loss;
}

at::Tensor GradScaler::unscale(const std::vector<at::Tensor>& parameters) {
  at::Tensor foundInf = at::zeros({1}, scale_.options());
  std::vector<at::Tensor> grads;
  for (const auto& parameter : parameters) {
    if (parameter.grad().defined()) grads.push_back(parameter.grad());
  }
  // PyTorch computes the reciprocal in float64 and stores it in float32.
  const at::Tensor invScale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  if (scale_.is_cuda()) {
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, invScale);
    return foundInf;
  }
  for (auto& grad : grads) {
    grad.mul_(invScale);
    foundInf.logical_or_(grad.isfinite().logical_not().any().reshape({1}));
  }
  return foundInf.to(at::kFloat);
}

void GradScaler::update(const at::Tensor& foundInf) {
  if (scale_.is_cuda()) {
    at::_amp_update_scale_(scale_, growthTracker_, foundInf, options_.growthFactor, options_.backoffFactor,
                           options_.growthInterval);
    return;
  }
  // The arithmetic of at::_amp_update_scale_, without a host sync.
  const at::Tensor overflow = foundInf.gt(0);
  const at::Tensor tracker = at::where(overflow, at::zeros_like(growthTracker_), growthTracker_ + 1);
  const at::Tensor grow = tracker.ge(options_.growthInterval);
  const at::Tensor grown = scale_ * options_.growthFactor;
  scale_.copy_(at::where(overflow, scale_ * options_.backoffFactor,
                         at::where(grow.logical_and(grown.isfinite()), grown, scale_)));
  growthTracker_.copy_(at::where(grow, at::zeros_like(tracker), tracker));
}

double GradScaler::currentScale() const { return scale_.item<double>(); }

TensorDict GradScaler::state() const { return {{"scale", scale_}, {"growth_tracker", growthTracker_}}; }

void GradScaler::restore(const TensorDict& state) {
  const auto scale = state.find("scale");
  const auto tracker = state.find("growth_tracker");
  if (scale == state.end() || tracker == state.end() || scale->second.numel() != 1 || tracker->second.numel() != 1) {
    throw InvalidArgument("grad scaler state: expected one-element 'scale' and 'growth_tracker'");
  }
  scale_.copy_(scale->second.reshape({1}));
  growthTracker_.copy_(tracker->second.reshape({1}));
}

}  // namespace firebrand
