#include "core/nn/lora.h"

#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/utils.h>

#include <cmath>

#include "core/errors.h"
#include "core/nn/layer_factory.h"

namespace firebrand {

void attachLora(BuiltLayer& layer, const LoraOptions& options, const std::string& owner) {
  auto* linear = dynamic_cast<torch::nn::LinearImpl*>(layer.module.ptr().get());
  if (!linear) throw InvalidArgument("lora: " + owner + " is not a linear layer; LoRA adapters go on linear layers");
  if (layer.lora) throw InvalidState("lora: " + owner + " has an adapter already");
  const int64_t in = linear->options.in_features(), out = linear->options.out_features();
  auto adapter = std::make_shared<LoraAdapter>();
  const auto device = linear->weight.device();
  const auto dtype = linear->weight.scalar_type();
  adapter->a = torch::nn::Linear(torch::nn::LinearOptions(in, options.r).bias(false));
  adapter->b = torch::nn::Linear(torch::nn::LinearOptions(options.r, out).bias(false));
  {
    torch::NoGradGuard noGrad;
    torch::nn::init::kaiming_uniform_(adapter->a->weight, std::sqrt(5.0));
    adapter->b->weight.zero_();
  }
  adapter->a->to(device, dtype);
  adapter->b->to(device, dtype);
  linear->register_module("lora_A", adapter->a);
  linear->register_module("lora_B", adapter->b);
  adapter->scaling = options.alpha / static_cast<double>(options.r);
  adapter->dropout = options.dropout;
  layer.lora = std::move(adapter);
}

at::Tensor loraDelta(const LoraAdapter& adapter, const at::Tensor& input, bool training) {
  const at::Tensor x = adapter.dropout > 0 ? at::dropout(input, adapter.dropout, training) : input;
  return at::linear(at::linear(x, adapter.a->weight), adapter.b->weight) * adapter.scaling;
}

void mergeLora(BuiltLayer& layer) {
  if (!layer.lora) return;
  auto* linear = dynamic_cast<torch::nn::LinearImpl*>(layer.module.ptr().get());
  {
    torch::NoGradGuard noGrad;
    linear->weight.add_(at::matmul(layer.lora->b->weight, layer.lora->a->weight) * layer.lora->scaling);
  }
  linear->unregister_module("lora_A");
  linear->unregister_module("lora_B");
  layer.lora.reset();
}

}  // namespace firebrand
