// LoRA adapters as PEFT's LoraLayer puts them on an nn.Linear: lora_A [r, in]
// and lora_B [out, r] (registered on the layer, so its parameters are
// "<path>.lora_A.weight", "<path>.lora_B.weight"), A drawn kaiming-uniform and
// B zeros, and the output base(x) + lora_B(lora_A(dropout(x))) * alpha / r.
#pragma once
#include <ATen/core/Tensor.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include <string>
#include <vector>

namespace firebrand {

struct BuiltLayer;

struct LoraOptions {
  int64_t r = 8;
  double alpha = 8;
  double dropout = 0;
  // PEFT's target_modules: a module path equal to one or ending with "." + one.
  std::vector<std::string> targetModules;
};

struct LoraAdapter {
  torch::nn::Linear a{nullptr};
  torch::nn::Linear b{nullptr};
  double scaling = 1;  // alpha / r
  double dropout = 0;
};

// Puts an adapter on `layer` (a linear layer; another kind is an error naming `owner`), drawing A
// and B as PEFT does: both constructed, then A kaiming-uniform (a = sqrt(5)) again and B zeroed.
void attachLora(BuiltLayer& layer, const LoraOptions& options, const std::string& owner);
// What the adapter adds to the layer's output for `input`.
at::Tensor loraDelta(const LoraAdapter& adapter, const at::Tensor& input, bool training);
// Folds the adapter into the layer's weight (W += B A * scaling) and removes it.
void mergeLora(BuiltLayer& layer);

}  // namespace firebrand
