// Submodules by path and their train/eval mode, for the model kinds' module
// trees (torch::nn for layer stacks and TypeScript modules, torch::jit for
// TorchScript): what keeps a frozen module in eval mode while the rest trains.
#pragma once
#include <torch/nn/module.h>

#include <string>
#include <vector>

namespace torch::jit {
struct Module;
}

namespace firebrand {

std::vector<std::string> submodulePaths(const torch::nn::Module& root);

// Sets the mode of the submodules at `paths` (each with its own submodules). A model switches modes twice a
// generated token and a frozen or int8 base has hundreds of frozen modules, so the paths are resolved by
// name (a string and a hash entry each) only when they differ from the last call's. A path keeps its
// module: firebrand adds and removes submodules (adapters) but never replaces one at a path.
class SubmoduleModes {
 public:
  void set(torch::nn::Module& root, const std::vector<std::string>& paths, bool training);

 private:
  std::vector<std::string> paths_;
  std::vector<std::shared_ptr<torch::nn::Module>> modules_;  // paths_' modules
};

// Setting modes walks the tree once for all `paths`.
std::vector<std::string> submodulePaths(const torch::jit::Module& root);
void setSubmodulesTraining(const torch::jit::Module& root, const std::vector<std::string>& paths, bool training);

}  // namespace firebrand
