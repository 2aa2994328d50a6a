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

// Setting modes walks the tree once for all `paths` (each with its own submodules): a model switches
// modes at every generated token, and a LoRA model has hundreds of frozen modules.
std::vector<std::string> submodulePaths(const torch::nn::Module& root);
void setSubmodulesTraining(torch::nn::Module& root, const std::vector<std::string>& paths, bool training);
std::vector<std::string> submodulePaths(const torch::jit::Module& root);
void setSubmodulesTraining(const torch::jit::Module& root, const std::vector<std::string>& paths, bool training);

}  // namespace firebrand
