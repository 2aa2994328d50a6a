// torch::optim::SGD whose step updates each parameter in one pass over its
// elements (sgd_update.h) instead of libtorch's three to six dispatched ops,
// each with a tensor or two to allocate: on a small model those ops are a
// large share of the step. Same options, same state (the momentum buffers,
// saved and loaded as SGD's), same bits. Parameters on another device, of
// another dtype than float32/float64, or whose gradient is laid out
// differently take libtorch's own step.
#pragma once
#include <torch/optim/sgd.h>

namespace firebrand {

class FusedSgd : public torch::optim::SGD {
 public:
  using torch::optim::SGD::SGD;

  at::Tensor step(LossClosure closure = nullptr) override;

 private:
  // Whether every parameter with a gradient can take the one-pass update.
  bool fusable();
  // The parameter's momentum buffer, made (uninitialised; the update fills it) on its first step.
  at::Tensor momentumBuffer(const at::Tensor& parameter, bool& made);
};

}  // namespace firebrand
