#include "core/model/submodule_modes.h"

#include <torch/script.h>

#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"

namespace firebrand {

std::vector<std::string> submodulePaths(const torch::nn::Module& root) {
  std::vector<std::string> paths;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) paths.push_back(item.key());
  return paths;
}

void SubmoduleModes::set(torch::nn::Module& root, const std::vector<std::string>& paths, bool training) {
  if (paths != paths_) {
    std::unordered_map<std::string, size_t> wanted;
    for (const std::string& path : paths) wanted.emplace(path, wanted.size());
    std::vector<std::shared_ptr<torch::nn::Module>> found(paths.size());
    for (const auto& item : root.named_modules("", /*include_self=*/false)) {
      const auto it = wanted.find(item.key());
      if (it != wanted.end()) found[it->second] = item.value();
    }
    for (size_t i = 0; i < paths.size(); ++i) {
      if (!found[i]) throw InvalidState("firebrand bug: the model has no submodule '" + paths[i] + "'");
    }
    paths_ = paths;
    modules_ = std::move(found);
  }
  for (const auto& module : modules_) module->train(training);
}

std::vector<std::string> submodulePaths(const torch::jit::Module& root) {
  std::vector<std::string> paths;
  for (const auto& item : root.named_modules()) {
    if (!item.name.empty()) paths.push_back(item.name);
  }
  return paths;
}

void setSubmodulesTraining(const torch::jit::Module& root, const std::vector<std::string>& paths, bool training) {
  if (paths.empty()) return;
  std::unordered_set<std::string> wanted(paths.begin(), paths.end());
  for (const auto& item : root.named_modules()) {
    if (!wanted.erase(item.name)) continue;
    torch::jit::Module module = item.value;  // a handle: train() sets the shared object's flag
    module.train(training);
  }
  if (!wanted.empty()) throw InvalidState("firebrand bug: the model has no submodule '" + *wanted.begin() + "'");
}

}  // namespace firebrand
