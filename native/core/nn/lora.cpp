#include "core/nn/lora.h"

#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include <cmath>

#include "core/compat/torch_compat.h"
#include "core/errors.h"
#include "core/nn/layer_factory.h"
#include "core/nn/linear_layer.h"

namespace firebrand {

namespace {

template <typename Module, typename Options>
torch::nn::AnyModule adapterPart(Options options, at::Tensor& weight) {
  Module module(options);
  weight = module->weight;
  return torch::nn::AnyModule(module);
}

}  // namespace

void attachLora(BuiltLayer& layer, const LoraOptions& options, const std::string& owner) {
  if (layer.lora) throw InvalidState("lora: " + owner + " has an adapter already");
  torch::nn::Module& base = *layer.module.ptr();
  auto adapter = std::make_shared<LoraAdapter>();
  at::Tensor baseWeight;
  if (auto* linear = dynamic_cast<torch::nn::LinearImpl*>(&base)) {
    baseWeight = linear->weight;
    const int64_t in = linear->options.in_features(), out = linear->options.out_features();
    adapter->a = adapterPart<LinearLayer>(torch::nn::LinearOptions(in, options.r).bias(false), adapter->aWeight);
    adapter->b = adapterPart<LinearLayer>(torch::nn::LinearOptions(options.r, out).bias(false), adapter->bWeight);
  } else if (auto* conv = dynamic_cast<torch::nn::Conv2dImpl*>(&base)) {
    baseWeight = conv->weight;
    const auto& o = conv->options;
    if (o.groups() != 1)
      throw InvalidArgument("lora: " + owner + " is a grouped convolution (groups " + std::to_string(o.groups()) +
                            "), which LoRA does not adapt");
    const auto* padding = compat::variantAlternative<torch::ExpandingArray<2>>(o.padding());
    if (!padding) throw InvalidArgument("lora: " + owner + " pads by name ('same'), which LoRA does not adapt");
    adapter->a = adapterPart<torch::nn::Conv2d>(torch::nn::Conv2dOptions(o.in_channels(), options.r, o.kernel_size())
                                                    .stride(o.stride())
                                                    .padding(*padding)
                                                    .dilation(o.dilation())
                                                    .bias(false),
                                                adapter->aWeight);
    adapter->b = adapterPart<torch::nn::Conv2d>(torch::nn::Conv2dOptions(options.r, o.out_channels(), 1).bias(false),
                                                adapter->bWeight);
  } else {
    throw InvalidArgument("lora: " + owner +
                          " is not a linear or conv2d layer; LoRA adapters go on linear and conv2d layers");
  }
  {
    torch::NoGradGuard noGrad;
    torch::nn::init::kaiming_uniform_(adapter->aWeight, std::sqrt(5.0));
    adapter->bWeight.zero_();
  }
  // PEFT's autocast_adapter_dtype: adapters on a half-precision layer train in float32.
  const bool half = baseWeight.scalar_type() == at::kBFloat16 || baseWeight.scalar_type() == at::kHalf;
  const at::ScalarType adapterDtype = half ? at::kFloat : baseWeight.scalar_type();
  adapter->a.ptr()->to(baseWeight.device(), adapterDtype);
  adapter->b.ptr()->to(baseWeight.device(), adapterDtype);
  base.register_module("lora_A", adapter->a.ptr());
  base.register_module("lora_B", adapter->b.ptr());
  const double rank = static_cast<double>(options.r);
  adapter->scaling = options.alpha / (options.useRslora ? std::sqrt(rank) : rank);
  adapter->dropout = options.dropout;
  layer.lora = std::move(adapter);
}

at::Tensor withLora(LoraAdapter& adapter, const at::Tensor& output, const at::Tensor& input, bool training) {
  // As PEFT's LoraLayer: the input in the adapters' dtype, the sum in the wider one, cast back to the output's.
  const at::Tensor adapterInput = input.to(adapter.aWeight.scalar_type());
  const at::Tensor x = adapter.dropout > 0 ? at::dropout(adapterInput, adapter.dropout, training) : adapterInput;
  return (output + adapter.b.forward(adapter.a.forward(x)) * adapter.scaling).to(output.scalar_type());
}

void mergeLora(BuiltLayer& layer) {
  if (!layer.lora) return;
  torch::nn::Module& base = *layer.module.ptr();
  const at::Tensor& a = layer.lora->aWeight;
  const at::Tensor& b = layer.lora->bWeight;
  {
    torch::NoGradGuard noGrad;
    // The delta in the adapters' dtype, rounded to the weight's before the sum, as PEFT's merge.
    if (auto* linear = dynamic_cast<torch::nn::LinearImpl*>(&base)) {
      linear->weight.add_((at::matmul(b, a) * layer.lora->scaling).to(linear->weight.scalar_type()));
    } else {
      // PEFT's Conv2d.get_delta_weight: B (1x1) composed with A's kernel.
      auto* conv = dynamic_cast<torch::nn::Conv2dImpl*>(&base);
      const at::Tensor delta = at::conv2d(a.permute({1, 0, 2, 3}), b).permute({1, 0, 2, 3}) * layer.lora->scaling;
      conv->weight.add_(delta.to(conv->weight.scalar_type()));
    }
  }
  base.unregister_module("lora_A");
  base.unregister_module("lora_B");
  layer.lora.reset();
}

}  // namespace firebrand
