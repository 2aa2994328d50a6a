// The module a TorchScript export writes: a torch::jit::Module holding a
// torch::nn module tree's parameters and buffers as attributes ("l0_weight" for
// "0.weight") and the forward the exporter defines, so torch.jit.load runs the
// result in Python or C++ without firebrand.
#pragma once
#include <torch/csrc/jit/api/module.h>
#include <torch/nn/module.h>

#include <map>
#include <string>

namespace firebrand {

class ScriptWriter {
 public:
  // Registers every parameter and buffer of `root` (copied to the CPU) on the module it writes.
  ScriptWriter(const torch::nn::Module& root, const std::string& className);

  // "self.<attribute>" for the state tensor `stateName`, or "None" when the model has none.
  std::string tensor(const std::string& stateName) const;
  // Defines `source` (its forward) and writes the module to `path`.
  void save(const std::string& source, const std::string& path);

 private:
  torch::jit::Module out_;
  std::map<std::string, std::string> attributes_;  // by state-dict name
};

}  // namespace firebrand
