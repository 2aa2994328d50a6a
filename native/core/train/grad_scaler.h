// Loss scaling for fp16 training, as torch.cuda.amp.GradScaler: the loss is
// multiplied by a scale before backward; gradients are divided by it before
// clipping and the optimizer step; a step whose gradients hold inf/NaN is
// skipped and the scale backs off; after growthInterval clean steps it grows.
// On CUDA it uses libtorch's fused AMP kernels; elsewhere (1.13 has no CPU
// kernels for them) the same arithmetic in plain tensor ops.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

#include "core/tensor_dict.h"

namespace firebrand {

// As config-schema.ts resolved them (defaults included): not checked again.
struct GradScalerOptions {
  bool enabled = false;
  double initScale = 0;
  double growthFactor = 0;
  double backoffFactor = 0;
  int64_t growthInterval = 0;
};

class GradScaler {
 public:
  explicit GradScaler(const GradScalerOptions& options);

  bool enabled() const { return options_.enabled; }
  void to(const c10::Device& device);
  at::Tensor scale(const at::Tensor& loss) const;
  // Divides the gradients by the scale in place; returns a one-element
  // float tensor on the device, 1 when any gradient is inf or NaN.
  at::Tensor unscale(const std::vector<at::Tensor>& parameters);
  // Backs off after an overflow, grows after growthInterval clean steps.
  void update(const at::Tensor& foundInf);
  double currentScale() const;
  // scale and growth tracker, for checkpoints (as torch's GradScaler.state_dict()).
  TensorDict state() const;
  void restore(const TensorDict& state);

 private:
  GradScalerOptions options_;
  at::Tensor scale_;          // float32 [1]
  at::Tensor growthTracker_;  // int32 [1]: clean steps since the last change
};

}  // namespace firebrand
