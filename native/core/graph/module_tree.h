// The torch::nn::Module tree of a model written as TypeScript modules: one
// module per TypeScript module, named as its fields, holding its parameters
// and buffers; built-in layers are the torch::nn modules nn.sequential uses.
// State-dict names and order are therefore PyTorch's.
#pragma once
#include <torch/nn/module.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/graph/module_spec.h"
#include "core/nn/layer_factory.h"

namespace firebrand {

struct TreeLayer {
  std::string owner;  // "layer1.0.conv1 (conv2d)", for errors
  BuiltLayer built;
  LayerSpec spec;  // as TypeScript resolved it: ops that call the layer read its options
};

struct ModuleTree {
  std::shared_ptr<torch::nn::Module> root;
  std::map<std::string, TreeLayer> layers;  // by module path
  // The model's own dtype (model.to(dtype)), which floating inputs are cast to; none: as given.
  std::optional<at::ScalarType> inputDtype;
};

// Builds the layers and runs the nn.init calls in `construction` order, so the
// default generator draws what the same Python program draws. The tensors named in `valuesLoadedLater`,
// which a checkpoint fills right after, draw nothing where their layer can make them so, and their
// nn.init calls are left out, as transformers' from_pretrained initializes only what its checkpoint lacks.
ModuleTree buildModuleTree(const ModuleSpec& spec, const std::vector<ConstructionStep>& construction,
                           const std::vector<std::string>& valuesLoadedLater = {});

}  // namespace firebrand
