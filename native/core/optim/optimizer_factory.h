// Optimizers chosen by PyTorch's name with PyTorch's defaults: sgd, adam,
// adamw, rmsprop, adagrad. Options use PyTorch's names in camelCase
// (weightDecay), plus parameter groups (see parameter_groups.h).
#pragma once
#include <torch/optim/optimizer.h>
#include <torch/ordered_dict.h>

#include <memory>
#include <string>
#include <vector>

#include "core/optim/parameter_groups.h"
#include "core/options/option_value.h"

namespace firebrand {

struct OptimizerSpec {
  std::string name;
  // Options of the optimizer, plus `noDecayOnBiasAndNorm` (bool).
  OptionMap options;
  std::vector<ParamGroupSpec> paramGroups;
};

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const OptimizerSpec& spec,
                                                       const torch::OrderedDict<std::string, at::Tensor>& named);

// The optimizers whose fused one-pass step (option `fused`, default true) runs
// for float32 CPU parameters in this process; the others take libtorch's.
std::vector<std::string> fusedOptimizers();

// The learning rate of the first parameter group, as reported with metrics.
double currentLearningRate(torch::optim::Optimizer& optimizer);

}  // namespace firebrand
