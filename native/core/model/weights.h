// Loading weights by state-dict name into a model (checkpoints, initWeightsFrom).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace firebrand {

struct WeightsReport {
  std::vector<std::string> missing;     // the model's, absent from the weights
  std::vector<std::string> unexpected;  // the weights', absent from the model
};

// Copies every weight whose name the model has into its parameter or buffer
// (cast to its dtype, on its device). A shape that differs is always an error;
// with `strict`, so is a missing or unexpected name. `origin` names the source.
WeightsReport loadWeights(Model& model, const TensorDict& weights, bool strict, const std::string& origin);

// `weights` with names changed as `renames` says (an absent entry keeps its name; nullopt drops it).
// Two weights given one name is an error naming both.
TensorDict renamedWeights(const TensorDict& weights, const std::map<std::string, std::optional<std::string>>& renames,
                          const std::string& origin);

// The weights in a file: a .safetensors file (by its content), else a TorchScript
// module's parameters and buffers. TorchScript files are code: load trusted ones only.
TensorDict readWeightsFile(const std::string& path);

}  // namespace firebrand
