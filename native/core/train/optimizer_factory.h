// Optimizers chosen by PyTorch's name with PyTorch's defaults:
// sgd, adam, adamw. Options use PyTorch's names in camelCase (weightDecay).
#pragma once
#include <torch/optim/optimizer.h>

#include <memory>
#include <string>
#include <vector>

#include "core/options/option_value.h"

namespace firebrand {

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const std::string& name, const OptionMap& options,
                                                       std::vector<at::Tensor> parameters);

// The learning rate of the first parameter group, as reported with metrics.
double currentLearningRate(torch::optim::Optimizer& optimizer);

}  // namespace firebrand
