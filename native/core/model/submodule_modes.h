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
void setSubmoduleTraining(torch::nn::Module& root, const std::string& path, bool training);
std::vector<std::string> submodulePaths(const torch::jit::Module& root);
void setSubmoduleTraining(const torch::jit::Module& root, const std::string& path, bool training);

}  // namespace firebrand
