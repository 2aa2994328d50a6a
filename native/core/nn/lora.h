// LoRA adapters as PEFT's LoraLayer puts them on an nn.Linear or nn.Conv2d:
// lora_A and lora_B registered on the layer (its parameters are
// "<path>.lora_A.weight", "<path>.lora_B.weight"), A drawn kaiming-uniform and
// B zeros, and the output base(x) + lora_B(lora_A(dropout(x))) * alpha / r.
#pragma once
#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/any.h>

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
  // PEFT's use_rslora: rank-stabilized scaling alpha / sqrt(r) instead of alpha / r.
  bool useRslora = false;
  // PEFT's use_dora: weight-decomposed adapters (linear layers), a trained magnitude per output row.
  bool useDora = false;
  // PEFT's modules_to_save: modules (matched as targetModules are) trained whole beside the adapters.
  std::vector<std::string> modulesToSave;
};

// lora_A and lora_B: linear layers on a linear layer; on a conv2d (PEFT's Conv2d), A a convolution
// with the layer's kernel, stride, padding and dilation to r channels, B a 1x1 convolution.
struct LoraAdapter {
  torch::nn::AnyModule a;
  torch::nn::AnyModule b;
  at::Tensor aWeight;
  at::Tensor bWeight;
  double scaling = 1;  // alpha / r (alpha / sqrt(r) with useRslora)
  double dropout = 0;
  // DoRA: the magnitude per output row (the "lora_magnitude_vector" submodule's weight), and the base
  // layer's weight and bias it rescales; undefined without DoRA.
  at::Tensor magnitude;
  at::Tensor baseWeight;
  at::Tensor baseBias;
  // The magnitude starts as NaN and becomes the rows' norms of the weights it is first used with, at the
  // first forward, save or merge (a checkpoint's weights load after the adapters are made), unless loaded
  // values (an adapter, a resumed checkpoint) replaced the NaN first.
  bool magnitudeSet = false;
};

// Sets a DoRA adapter's magnitude to its layer's row norms if nothing has set it yet (PEFT's init).
void settleDoraMagnitude(LoraAdapter& adapter);

// The state-dict name of a DoRA magnitude under a layer (PEFT saves it as "<path>.lora_magnitude_vector").
inline constexpr const char* kDoraMagnitude = "lora_magnitude_vector.weight";

// Puts an adapter on `layer` (linear or conv2d; another kind is an error naming `owner`), drawing A
// and B as PEFT does: both constructed, then A kaiming-uniform (a = sqrt(5)) again and B zeroed. On a
// bfloat16 or float16 layer the adapter is float32, as PEFT's autocast_adapter_dtype makes it.
void attachLora(BuiltLayer& layer, const LoraOptions& options, const std::string& owner);
// The layer's `output` for `input` with what the adapter adds.
at::Tensor withLora(LoraAdapter& adapter, const at::Tensor& output, const at::Tensor& input, bool training);
// Folds the adapter into the layer's weight (W += B A * scaling) and removes it.
void mergeLora(BuiltLayer& layer);

}  // namespace firebrand
