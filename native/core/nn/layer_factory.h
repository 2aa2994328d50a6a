// Builds one torch::nn module from a LayerSpec as src/nn/layer-schemas.ts
// resolved it (every rule and default is there).
#pragma once
#include <torch/nn/modules/container/any.h>

#include <memory>
#include <string>
#include <vector>

#include "core/nn/layer_spec.h"

namespace firebrand {

struct LoraAdapter;

struct BuiltLayer {
  torch::nn::AnyModule module;
  // What the layer accepts, for shape errors: "[*, 784] (inFeatures=784)".
  std::string expectedInput;
  // A LoRA adapter whose output runLayer adds (lora.h), or null.
  std::shared_ptr<LoraAdapter> lora;
};

// `owner` names the layer in errors, e.g. "layers[2] (conv2d)".
BuiltLayer buildLayer(const LayerSpec& spec, const std::string& owner);

// Runs the layer on `input`; a failure names the layer, the input it got and
// the input it takes (or the dtype, for integer inputs to float weights).
at::Tensor runLayer(BuiltLayer& layer, const at::Tensor& input, const std::string& owner);

}  // namespace firebrand
