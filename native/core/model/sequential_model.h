// A model built from a list of LayerSpecs, run layer by layer so that a
// failing layer is named with the input it got and the input it expects.
// Parameters are registered as "0.weight", "0.bias", ... like PyTorch's
// nn.Sequential, so state dicts line up with Python.
#pragma once
#include <torch/nn/module.h>

#include <string>
#include <vector>

#include "core/model/layer_factory.h"
#include "core/model/layer_spec.h"

namespace firebrand {

class SequentialModel : public torch::nn::Module {
 public:
  explicit SequentialModel(const ModelSpec& spec);

  torch::Tensor forward(torch::Tensor input);

  int64_t parameterCount() const;

 private:
  struct Layer {
    std::string owner;  // "layers[2] (conv2d)"
    BuiltLayer built;
  };
  std::vector<Layer> layers_;
};

}  // namespace firebrand
