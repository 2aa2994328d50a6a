// Freezing and unfreezing a model's parameters by pattern (name_patterns.h),
// for config.freeze before the optimizers exist and for the engine's freeze /
// unfreeze during training.
#pragma once
#include <string>
#include <vector>

#include "core/model/model.h"

namespace firebrand {

// Freezes the parameters `patterns` take and returns their names. Errors name a pattern that takes
// nothing (`owner`: "freeze", "config.freeze"), or say so when nothing would be left to train.
// namedParameters()' names, in order.
std::vector<std::string> parameterNames(const Model& model);

std::vector<std::string> freezeMatching(Model& model, const std::vector<std::string>& patterns,
                                        const std::string& owner);
std::vector<std::string> unfreezeMatching(Model& model, const std::vector<std::string>& patterns,
                                          const std::string& owner);

}  // namespace firebrand
