#include "core/graph/inference_folding.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>

#include "core/compat/torch_compat.h"
#include "core/graph/fused_activation.h"
#include "core/graph/layer_calls.h"
#include "core/graph/lowered_steps.h"
#include "core/graph/packed_convolution.h"

namespace firebrand {
namespace {

thread_local bool loweringAllowed = true;
thread_local bool predictionLowering = false;

// A convolution as it runs lowered (with the BatchNorm after it folded in, where `norm` is given), its
// weights kept while their source tensors keep their versions.
class LoweredConv {
 public:
  static constexpr bool kTakesResidual = true;
  static constexpr bool kTakesActivation = true;

  LoweredConv(BuiltLayer& layer, torch::nn::Conv2dImpl& conv, torch::nn::BatchNorm2dImpl* norm)
      : layer_(layer), conv_(conv), norm_(norm) {}

  // Whether this forward runs lowered on `input`: the norm (if any) uses its statistics, nothing needs
  // gradients, no LoRA adapter (attached after the graph was compiled) adds to the convolution, and the
  // input is one it takes (any other runs as written, whose error names the layer).
  bool runsOn(const c10::IValue& input) const {
    return inferenceLoweringActive() && !(norm_ && norm_->is_training()) && !layer_.lora && input.isTensor() &&
           input.toTensor().dim() == 4 && input.toTensor().size(1) == conv_.options.in_channels();
  }

  // The activation that alone reads the norm (or the convolution) runs here too (oneDNN's post-op where the
  // weight is packed).
  void takeActivation(FusedActivation activation) { activation_ = activation; }

  // The convolution of `input`, plus `residual` where given (a sum the lowering runs it at), then the activation.
  at::Tensor run(const at::Tensor& input, const at::Tensor* residual) {
    const auto& o = conv_.options;
    const auto* padding = compat::variantAlternative<torch::ExpandingArray<2>>(o.padding());
    std::lock_guard<std::mutex> lock(mutex_);
    refresh();
    // Channels-last inputs (channels_last_lowering.h) convolve with a channels-last weight, made once.
    const auto format = input.suggest_memory_format();
    if (!weight_.is_contiguous(format)) {
      weight_ = weight_.contiguous(format);
      packed_.clear();
    }
    const auto convolve = [&](FusedActivation activation, const at::Tensor* added) {
      return packed_.run(input, weight_, bias_, *o.stride(), **padding, *o.dilation(), o.groups(), activation, added);
    };
    if (auto out = convolve(activation_, residual)) return *out;
    // A residual oneDNN does not add (another layout, a broadcast, no oneDNN 3): added as the forward wrote it.
    const FusedActivation inside = residual ? FusedActivation::None : activation_;
    at::Tensor out;
    if (auto packed = convolve(inside, nullptr)) {
      out = *packed;
    } else {
      out = at::conv2d(input, weight_, bias_, *o.stride(), **padding, *o.dilation(), o.groups());
      out = applyActivation(out, inside);
    }
    if (!residual) return out;
    at::Tensor sum = at::add(out, *residual);
    return applyActivation(sum, activation_);
  }

 private:
  int64_t sourceVersion() const {
    int64_t version = 0;
    const auto add = [&](const at::Tensor& t) {
      if (t.defined()) version += static_cast<int64_t>(t._version()) + reinterpret_cast<intptr_t>(t.data_ptr());
    };
    for (const at::Tensor* t : {&conv_.weight, &conv_.bias}) add(*t);
    if (norm_) {
      for (const at::Tensor* t : {&norm_->weight, &norm_->bias, &norm_->running_mean, &norm_->running_var}) add(*t);
    }
    return version;
  }

  void refresh() {
    const int64_t version = sourceVersion();
    if (weight_.defined() && version == version_ && weight_.device() == conv_.weight.device()) return;
    at::NoGradGuard noGrad;
    packed_.clear();
    version_ = version;
    if (!norm_) {
      weight_ = conv_.weight.detach().contiguous();
      bias_ = conv_.bias.defined() ? conv_.bias.detach() : at::Tensor();
      return;
    }
    // In float32 (or wider) then rounded to the weight's dtype, as onnxruntime folds in float.
    const at::ScalarType wide = at::promote_types(conv_.weight.scalar_type(), at::kFloat);
    const torch::nn::BatchNorm2dImpl& norm = *norm_;
    at::Tensor scale = norm.running_var.to(wide).add(norm.options.eps()).rsqrt();
    if (norm.weight.defined()) scale = scale.mul(norm.weight.to(wide));
    at::Tensor shift = conv_.bias.defined() ? conv_.bias.to(wide) : at::zeros_like(scale);
    shift = shift.sub(norm.running_mean.to(wide)).mul(scale);
    if (norm.bias.defined()) shift = shift.add(norm.bias.to(wide));
    const auto dtype = conv_.weight.scalar_type();
    weight_ = conv_.weight.to(wide).mul(scale.view({-1, 1, 1, 1})).to(dtype).contiguous();
    bias_ = shift.to(dtype);
  }

  BuiltLayer& layer_;
  torch::nn::Conv2dImpl& conv_;
  torch::nn::BatchNorm2dImpl* norm_;
  std::mutex mutex_;
  at::Tensor weight_, bias_;
  PackedConvolution packed_;
  FusedActivation activation_ = FusedActivation::None;
  int64_t version_ = 0;
};

bool lowerable(const torch::nn::Conv2dImpl& conv) {
  return compat::variantAlternative<torch::ExpandingArray<2>>(conv.options.padding()) &&
         compat::variantAlternative<torch::enumtype::kZeros>(conv.options.padding_mode()) != nullptr;
}

bool foldable(const torch::nn::Conv2dImpl& conv, const torch::nn::BatchNorm2dImpl& norm) {
  return norm.options.track_running_stats() && norm.running_var.defined() &&
         norm.options.num_features() == conv.options.out_channels();
}

torch::nn::Conv2dImpl* convolutionAt(const GraphSpec& graph, size_t i, ModuleTree& tree, TreeLayer** layer) {
  *layer = calledLayer(graph.nodes[i], i, tree);
  auto* conv = *layer ? dynamic_cast<torch::nn::Conv2dImpl*>((*layer)->built.module.ptr().get()) : nullptr;
  return conv && lowerable(*conv) ? conv : nullptr;
}

}  // namespace

InferenceLoweringScope::InferenceLoweringScope(bool allowed)
    : previous_(loweringAllowed), previousPrediction_(predictionLowering) {
  loweringAllowed = allowed;
  predictionLowering = allowed;
}
InferenceLoweringScope::~InferenceLoweringScope() {
  loweringAllowed = previous_;
  predictionLowering = previousPrediction_;
}

bool inferenceLoweringActive() { return loweringAllowed && !at::GradMode::is_enabled(); }
bool predictionLoweringActive() { return predictionLowering && inferenceLoweringActive(); }

size_t lowerConvolutions(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                         std::vector<OpRun>& steps) {
  Readers readers(graph, reads);
  std::vector<bool> lowered(graph.nodes.size(), false);
  size_t folded = 0;
  for (size_t j = 0; j < graph.nodes.size(); ++j) {
    TreeLayer* normLayer = calledLayer(graph.nodes[j], j, tree);
    auto* norm = normLayer ? dynamic_cast<torch::nn::BatchNorm2dImpl*>(normLayer->built.module.ptr().get()) : nullptr;
    if (!norm) continue;
    const auto i = static_cast<size_t>(NodeArgs(graph.nodes[j], j).tensor(1));
    TreeLayer* convLayer = nullptr;
    torch::nn::Conv2dImpl* conv = convolutionAt(graph, i, tree, &convLayer);
    if (!conv || readers.count[i] != 1 || !foldable(*conv, *norm)) continue;
    runLowered(graph, readers, steps, std::make_shared<LoweredConv>(convLayer->built, *conv, norm), i, j);
    lowered[i] = true;
    ++folded;
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    TreeLayer* convLayer = nullptr;
    torch::nn::Conv2dImpl* conv = lowered[i] ? nullptr : convolutionAt(graph, i, tree, &convLayer);
    if (conv) runLowered(graph, readers, steps, std::make_shared<LoweredConv>(convLayer->built, *conv, nullptr), i, {});
  }
  return folded;
}

}  // namespace firebrand
