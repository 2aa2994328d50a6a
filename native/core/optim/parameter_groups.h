// Splits a model's named parameters into optimizer parameter groups: groups
// chosen by name prefix (PyTorch state-dict names: "0.weight", "encoder.")
// with their own lr / weight decay, and optionally no weight decay on biases
// and normalization weights (every parameter of one dimension or less).
#pragma once
#include <ATen/core/Tensor.h>
#include <torch/ordered_dict.h>

#include <optional>
#include <string>
#include <vector>

#include "core/options/option_value.h"

namespace firebrand {

struct ParamGroupSpec {
  std::vector<std::string> params;  // name prefixes
  OptionMap options;                // lr, weightDecay
};

struct ParameterGroupPlan {
  std::vector<at::Tensor> parameters;
  std::optional<double> lr;
  std::optional<double> weightDecay;
};

std::vector<ParameterGroupPlan> planParameterGroups(const torch::OrderedDict<std::string, at::Tensor>& named,
                                                    const std::vector<ParamGroupSpec>& specs,
                                                    bool noDecayOnBiasAndNorm);

}  // namespace firebrand
