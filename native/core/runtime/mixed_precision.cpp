#include "core/runtime/mixed_precision.h"

#include <ATen/autocast_mode.h>

#include "core/compat/torch_compat.h"
#include "core/errors.h"

namespace firebrand {

std::optional<at::ScalarType> autocastDtype(const std::string& mixedPrecision, const c10::Device& device) {
  if (mixedPrecision == "no") return std::nullopt;
  if (mixedPrecision == "bf16") {
    if (!device.is_cpu() && !device.is_cuda()) {
      throw InvalidArgument("mixedPrecision 'bf16' runs on CPU or CUDA devices, not '" + device.str() + "'");
    }
    return at::kBFloat16;
  }
  if (mixedPrecision == "fp16") {
    if (!device.is_cuda()) {
      throw InvalidArgument("mixedPrecision 'fp16' needs a CUDA device (this trainer runs on '" + device.str() +
                            "'); use 'bf16' on CPU, or 'no'");
    }
    return at::kHalf;
  }
  throw InvalidArgument("mixedPrecision must be 'no', 'fp16' or 'bf16', got '" + mixedPrecision + "'");
}

AutocastScope::AutocastScope(c10::DeviceType device, std::optional<at::ScalarType> dtype)
    : device_(device), active_(dtype.has_value()) {
  if (!active_) return;
  wasEnabled_ = compat::autocastEnabled(device_);
  previousDtype_ = compat::autocastDtype(device_);
  compat::setAutocast(device_, true, *dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // Casts cached for this scope are freed when the outermost scope ends, as in PyTorch.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::setAutocast(device_, wasEnabled_, previousDtype_);
}

}  // namespace firebrand
