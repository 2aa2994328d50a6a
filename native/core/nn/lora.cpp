#include "core/nn/lora.h"

#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include <cmath>
#include <limits>

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

// ||W + scaling · B A|| per output row, in the adapters' dtype (PEFT's DoraLinearLayer.get_weight_norm).
at::Tensor rowNorms(const LoraAdapter& adapter, const at::Tensor& delta) {
  return (adapter.baseWeight.to(delta.scalar_type()) + delta).norm(2, {1});
}

// DoRA's magnitude, initialized to the rows' norms as PEFT's update_layer does, as a submodule's weight.
void attachDoraMagnitude(torch::nn::Module& base, LoraAdapter& adapter, const std::string& owner) {
  auto* linear = dynamic_cast<torch::nn::LinearImpl*>(&base);
  if (linear == nullptr) throw InvalidArgument("lora.useDora: " + owner + " is not a linear layer; DoRA adapts those");
  if (!at::isFloatingType(linear->weight.scalar_type()))
    throw InvalidArgument("lora.useDora: " + owner + "'s weight is " +
                          std::string(c10::toString(linear->weight.scalar_type())) +
                          "; DoRA needs the base layer's weight in floating point");
  adapter.baseWeight = linear->weight;
  adapter.baseBias = linear->bias;
  auto holder = std::make_shared<torch::nn::Module>();
  adapter.magnitude = holder->register_parameter(
      "weight",
      at::full({linear->options.out_features()}, std::numeric_limits<double>::quiet_NaN(), adapter.aWeight.options()));
  base.register_module("lora_magnitude_vector", holder);
}

}  // namespace

void settleDoraMagnitude(LoraAdapter& adapter) {
  if (!adapter.magnitude.defined() || adapter.magnitudeSet) return;
  adapter.magnitudeSet = true;
  if (!adapter.magnitude.isnan().any().item<bool>()) return;  // loaded before its first use
  torch::NoGradGuard noGrad;
  adapter.magnitude.copy_(rowNorms(adapter, at::matmul(adapter.bWeight, adapter.aWeight) * adapter.scaling));
}

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
  if (options.useDora) attachDoraMagnitude(base, *adapter, owner);
  layer.lora = std::move(adapter);
}

at::Tensor withLora(LoraAdapter& adapter, const at::Tensor& output, const at::Tensor& input, bool training) {
  // As PEFT's LoraLayer: the input in the adapters' dtype, the sum in the wider one, cast back to the output's.
  const at::Tensor adapterInput = input.to(adapter.aWeight.scalar_type());
  const bool dropped = adapter.dropout > 0 && training;
  const at::Tensor x = dropped ? at::dropout(adapterInput, adapter.dropout, training) : adapterInput;
  const at::Tensor update = adapter.b.forward(adapter.a.forward(x)) * adapter.scaling;
  if (!adapter.magnitude.defined()) return (output + update).to(output.scalar_type());
  settleDoraMagnitude(adapter);
  // DoRA (PEFT's DoraLinearLayer.forward): the rows rescaled to magnitude / ||W + s·BA||, the norm held
  // constant in backward as the paper's section 4.3 says; the base output without its bias, or on the
  // dropped-out input.
  const at::Tensor delta = (at::matmul(adapter.bWeight, adapter.aWeight) * adapter.scaling).detach();
  const at::Tensor scale = adapter.magnitude / rowNorms(adapter, delta).detach();
  const at::Tensor weight = adapter.baseWeight.to(x.scalar_type());
  at::Tensor baseResult = output.to(x.scalar_type());
  if (dropped)
    baseResult = at::linear(x, weight);
  else if (adapter.baseBias.defined())
    baseResult = baseResult - adapter.baseBias.to(x.scalar_type());
  return (output + (scale - 1) * baseResult + scale * update).to(output.scalar_type());
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
      const at::Tensor delta = at::matmul(b, a) * layer.lora->scaling;
      if (layer.lora->magnitude.defined()) {
        settleDoraMagnitude(*layer.lora);
        // PEFT's DoraLinearVariant.merge: W' = magnitude / ||W + ΔW|| · (W + ΔW), row by row.
        const at::Tensor merged = linear->weight.to(delta.scalar_type()) + delta;
        const at::Tensor factor = (layer.lora->magnitude / rowNorms(*layer.lora, delta)).unsqueeze(1);
        linear->weight.copy_((factor * merged).to(linear->weight.scalar_type()));
        base.unregister_module("lora_magnitude_vector");
      } else {
        linear->weight.add_(delta.to(linear->weight.scalar_type()));
      }
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
