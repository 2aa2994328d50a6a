// What TorchScript exports share: a torch::jit::Module holding a torch::nn
// module tree's parameters and buffers as attributes ("l0_weight" for
// "0.weight"), TorchScript literals, and each built-in layer's expression as
// aten ops, so torch.jit.load runs the result in Python or C++ without firebrand.
#pragma once
#include <torch/csrc/jit/api/module.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>

#include <map>
#include <string>
#include <vector>

#include "core/nn/layer_spec.h"
#include "core/nn/script_text.h"

namespace firebrand {

class ScriptWriter {
 public:
  // Registers every parameter and buffer of `root` (copied to the CPU) on the module it writes.
  ScriptWriter(const torch::nn::Module& root, const std::string& className);

  // "self.<attribute>" for the state tensor `stateName`, or "None" when the model has none.
  std::string tensor(const std::string& stateName) const;
  // The layer at `path` (its tensors are "<path>.weight", ...) applied to the variable `x`.
  std::string layer(const LayerSpec& spec, const torch::nn::AnyModule& module, const std::string& path) const;
  // The LSTM, GRU or RNN at `path` applied to the expressions `x`, `h0` and `c0` ("None" for zeros)
  // and `lengths` ("None": every step; else kPackedRecurrentMethod's call). It returns (output, h_n[, c_n]).
  std::string recurrent(const LayerSpec& spec, const torch::nn::AnyModule& module, const std::string& path, const std::string& x,
                        const std::string& h0, const std::string& c0, const std::string& lengths) const;
  // Defines `source` (its forward) and writes the module to `path`.
  void save(const std::string& source, const std::string& path);

 private:
  torch::jit::Module out_;
  std::map<std::string, std::string> attributes_;  // by state-dict name
};

}  // namespace firebrand
