// Mixed precision: which dtype autocast runs the forward and the loss in,
// checked against the device, and the scope that turns autocast on.
#pragma once
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

namespace firebrand {

// 'no' -> nullopt; 'fp16' -> Half (CUDA only); 'bf16' -> BFloat16 (CUDA or CPU).
// Never falls back silently: fp16 without CUDA is an error.
std::optional<at::ScalarType> autocastDtype(const std::string& mixedPrecision, const c10::Device& device);

// Autocast on for the device type while it lives (as `with torch.autocast(...)`).
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, std::optional<at::ScalarType> dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool active_;
  bool wasEnabled_ = false;
  at::ScalarType previousDtype_ = at::kFloat;
};

}  // namespace firebrand
