// torch::optim::SGD whose step updates each parameter in one pass over its
// elements (sgd_update.h) instead of libtorch's three to six dispatched ops,
// each with a tensor or two to allocate: on a small model those ops are a
// large share of the step. Same options, same state (the momentum buffers,
// saved and loaded as SGD's), same bits. A step takes libtorch's own path
// when a parameter is on another device, of another dtype than
// float32/float64, or laid out differently from its gradient or buffer, and
// when it is given a closure.
#pragma once
#include <torch/optim/sgd.h>

#include <vector>

#include "core/optim/fused_step_support.h"

namespace firebrand {

class FusedSgd : public torch::optim::SGD {
 public:
  using torch::optim::SGD::SGD;

  at::Tensor step(LossClosure closure = nullptr) override;

 private:
  struct PendingUpdate {
    const at::Tensor* parameter;
    const at::Tensor* grad;
    const torch::optim::SGDOptions* options;
    const at::Tensor* buffer;  // the momentum buffer; null without momentum or before its first step
  };

  // This step's updates, checked before any is made; false when one needs libtorch's step.
  bool planUpdates();
  // The momentum buffer of `parameter`; `made` when new (uninitialised: its first update fills it).
  const at::Tensor& momentumBuffer(const at::Tensor& parameter, bool& made);

  std::vector<PendingUpdate> updates_;
  OptimizerStateKeys keys_;
};

}  // namespace firebrand
