#include "core/nn/trunc_normal.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "core/compat/torch_compat.h"

namespace firebrand {
namespace {

double normalCdf(double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; }

// PyTorch 1.13 to 2.11: the inverse CDF of a uniform draw between the bounds' CDFs.
[[maybe_unused]] void inverseCdf(at::Tensor& tensor, double mean, double std, double a, double b) {
  const double low = normalCdf((a - mean) / std);
  const double high = normalCdf((b - mean) / std);
  tensor.uniform_(2 * low - 1, 2 * high - 1);
  tensor.erfinv_();
  tensor.mul_(std * std::sqrt(2.0));
  tensor.add_(mean);
  tensor.clamp_(a, b);
}

// The bound as the tensor's dtype holds it (tensor.new_tensor(a).item()).
double representable(const at::Tensor& tensor, double bound) {
  return at::scalar_tensor(bound, at::TensorOptions().dtype(tensor.scalar_type())).item<double>();
}

// PyTorch 2.12 on: normal draws, out-of-bounds ones drawn again (most mass inside), or uniform
// proposals accepted by the density (little mass inside). Every draw as PyTorch makes it, so the
// generator advances the same.
[[maybe_unused]] void rejection(at::Tensor& tensor, double mean, double std, double a, double b) {
  const double mass = normalCdf((b - mean) / std) - normalCdf((a - mean) / std);
  if (mass > 0.3) {
    const double low = representable(tensor, a), high = representable(tensor, b);
    at::Tensor result = tensor.normal_(mean, std);
    while (true) {
      const at::Tensor outside = result.lt(low).logical_or_(result.gt(high));
      if (!outside.any().item<bool>()) break;
      result = at::where(outside, at::empty_like(result).normal_(mean, std), result);
    }
    if (!result.is_same(tensor)) tensor.copy_(result);
    return;
  }
  const double mode = std::max(a, std::min(mean, b));
  const double logPeak = -0.5 * std::pow((mode - mean) / std, 2);
  at::Tensor candidates = at::empty_like(tensor);
  at::Tensor acceptance = at::empty_like(tensor);
  const auto logDensity = [&](at::Tensor& x) { x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(logPeak); };
  tensor.uniform_(a, b);
  candidates.copy_(tensor);
  logDensity(candidates);
  at::Tensor pending = acceptance.uniform_().log_().gt(candidates);
  if (!pending.any().item<bool>()) return;
  at::Tensor result = tensor;
  while (true) {
    candidates.uniform_(a, b);
    result = at::where(pending, candidates, result);
    logDensity(candidates);
    pending = at::where(pending, acceptance.uniform_().log_().gt(candidates), pending);
    if (!pending.any().item<bool>()) break;
  }
  tensor.copy_(result);
}

}  // namespace

void truncNormal(at::Tensor& tensor, double mean, double std, double a, double b) {
#if FIREBRAND_TORCH_AT_LEAST(2, 12)
  rejection(tensor, mean, std, a, b);
#else
  inverseCdf(tensor, mean, std, a, b);
#endif
}

}  // namespace firebrand
