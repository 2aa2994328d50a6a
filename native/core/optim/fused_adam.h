// torch::optim::Adam and AdamW whose step updates each parameter in one pass
// over its elements (adam_update.h) instead of libtorch's nine to eleven
// dispatched ops and their temporaries. Same options, same state (step,
// exp_avg, exp_avg_sq, max_exp_avg_sq; saved and loaded as libtorch's), same
// bits: before its first use for a dtype, the one-pass update is checked
// against libtorch's own step on random data, and a process where they
// differ in one bit keeps libtorch's step. A step also takes libtorch's path
// when a parameter is on another device, of another dtype than
// float32/float64, or laid out differently from its gradient or state, and
// when it is given a closure.
#pragma once
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <vector>

#include "core/optim/fused_step_support.h"

namespace firebrand {

template <typename Base, typename Options, typename State>
class FusedAdamFamily : public Base, public StateMadeAhead {
 public:
  using Base::Base;

  // Zeros and step 0, what libtorch's first step makes: its update then runs as if made there.
  void makeState(const std::function<bool(const at::Tensor&)>& wanted) override;

  at::Tensor step(typename Base::LossClosure closure = nullptr) override;

  // Whether the one-pass update runs for parameters of `dtype` in this process (checked once).
  static bool fusesFor(at::ScalarType dtype);

 private:
  struct PendingUpdate {
    const at::Tensor* parameter;
    const at::Tensor* grad;
    const Options* options;
    State* state;  // null before the parameter's first step
  };

  // This step's updates, checked before any is made; false when one needs libtorch's step.
  bool planUpdates();
  // The parameter's state, made (zeros, step 0) before its first step.
  State& stateOf(const at::Tensor& parameter, bool amsgrad);

  std::vector<PendingUpdate> updates_;
  OptimizerStateKeys keys_;
};

using FusedAdam = FusedAdamFamily<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState>;
using FusedAdamW = FusedAdamFamily<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState>;

}  // namespace firebrand
