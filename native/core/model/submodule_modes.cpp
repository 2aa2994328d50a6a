#include "core/model/submodule_modes.h"

#include <torch/script.h>

#include "core/errors.h"

namespace firebrand {

std::vector<std::string> submodulePaths(const torch::nn::Module& root) {
  std::vector<std::string> paths;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) paths.push_back(item.key());
  return paths;
}

void setSubmoduleTraining(torch::nn::Module& root, const std::string& path, bool training) {
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    if (item.key() == path) return item.value()->train(training);
  }
  throw InvalidState("firebrand bug: the model has no submodule '" + path + "'");
}

std::vector<std::string> submodulePaths(const torch::jit::Module& root) {
  std::vector<std::string> paths;
  for (const auto& item : root.named_modules()) {
    if (!item.name.empty()) paths.push_back(item.name);
  }
  return paths;
}

void setSubmoduleTraining(const torch::jit::Module& root, const std::string& path, bool training) {
  for (const auto& item : root.named_modules()) {
    if (item.name != path) continue;
    torch::jit::Module module = item.value;  // a handle: train() sets the shared object's flag
    return module.train(training);
  }
  throw InvalidState("firebrand bug: the model has no submodule '" + path + "'");
}

}  // namespace firebrand
