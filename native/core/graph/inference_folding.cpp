#include "core/graph/inference_folding.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "core/compat/torch_compat.h"
#include "core/graph/layer_calls.h"
#include "core/graph/packed_convolution.h"

namespace firebrand {
namespace {

thread_local bool loweringAllowed = true;

// The folded convolution of one pair, kept while its source tensors keep their versions.
class FoldedConv {
 public:
  FoldedConv(BuiltLayer& layer, torch::nn::Conv2dImpl& conv, torch::nn::BatchNorm2dImpl& norm)
      : layer_(layer), conv_(conv), norm_(norm) {}

  // Whether this forward folds: the norm uses its statistics, nothing needs gradients, and no LoRA
  // adapter (attached after the graph was compiled) adds to the convolution.
  bool active() const { return inferenceLoweringActive() && !norm_.is_training() && !layer_.lora; }

  // The ReLU that alone reads the norm runs here too (oneDNN's post-op where the weight is packed).
  void takeRelu() { relu_ = true; }

  at::Tensor run(const at::Tensor& input) {
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
    if (auto out = packed_.run(input, weight_, bias_, *o.stride(), **padding, *o.dilation(), o.groups(), relu_))
      return *out;
    at::Tensor out = at::conv2d(input, weight_, bias_, *o.stride(), **padding, *o.dilation(), o.groups());
    return relu_ ? out.relu_() : out;
  }

 private:
  int64_t sourceVersion() const {
    int64_t version = 0;
    for (const at::Tensor* t :
         {&conv_.weight, &conv_.bias, &norm_.weight, &norm_.bias, &norm_.running_mean, &norm_.running_var}) {
      if (t->defined()) version += static_cast<int64_t>(t->_version()) + reinterpret_cast<intptr_t>(t->data_ptr());
    }
    return version;
  }

  void refresh() {
    const int64_t version = sourceVersion();
    if (weight_.defined() && version == version_ && weight_.device() == conv_.weight.device()) return;
    at::NoGradGuard noGrad;
    // In float32 (or wider) then rounded to the weight's dtype, as onnxruntime folds in float.
    const at::ScalarType wide = at::promote_types(conv_.weight.scalar_type(), at::kFloat);
    at::Tensor scale = norm_.running_var.to(wide).add(norm_.options.eps()).rsqrt();
    if (norm_.weight.defined()) scale = scale.mul(norm_.weight.to(wide));
    at::Tensor shift = conv_.bias.defined() ? conv_.bias.to(wide) : at::zeros_like(scale);
    shift = shift.sub(norm_.running_mean.to(wide)).mul(scale);
    if (norm_.bias.defined()) shift = shift.add(norm_.bias.to(wide));
    const auto dtype = conv_.weight.scalar_type();
    weight_ = conv_.weight.to(wide).mul(scale.view({-1, 1, 1, 1})).to(dtype).contiguous();
    bias_ = shift.to(dtype);
    packed_.clear();
    version_ = version;
  }

  BuiltLayer& layer_;
  torch::nn::Conv2dImpl& conv_;
  torch::nn::BatchNorm2dImpl& norm_;
  std::mutex mutex_;
  at::Tensor weight_, bias_;
  PackedConvolution packed_;
  bool relu_ = false;
  int64_t version_ = 0;
};

// A node whose value the folded convolution computed: it passes `value` on when the fold is active.
OpRun passing(const std::shared_ptr<FoldedConv>& fold, int64_t value, OpRun unfolded) {
  return [fold, value, unfolded = std::move(unfolded)](GraphFrame& f) -> c10::IValue {
    return fold->active() ? f.values[value] : unfolded(f);
  };
}

bool foldable(torch::nn::Conv2dImpl& conv, torch::nn::BatchNorm2dImpl& norm) {
  const auto* padding = compat::variantAlternative<torch::ExpandingArray<2>>(conv.options.padding());
  return padding && compat::variantAlternative<torch::enumtype::kZeros>(conv.options.padding_mode()) != nullptr &&
         norm.options.track_running_stats() && norm.running_var.defined() &&
         norm.options.num_features() == conv.options.out_channels();
}

}  // namespace

InferenceLoweringScope::InferenceLoweringScope(bool allowed) : previous_(loweringAllowed) { loweringAllowed = allowed; }
InferenceLoweringScope::~InferenceLoweringScope() { loweringAllowed = previous_; }

bool inferenceLoweringActive() { return loweringAllowed && !at::GradMode::is_enabled(); }

size_t foldConvBatchNorm(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                         std::vector<OpRun>& steps) {
  std::vector<int> readers(graph.nodes.size(), 0);
  std::vector<size_t> reader(graph.nodes.size(), 0);
  for (size_t k = 0; k < reads.size(); ++k) {
    for (const int64_t slot : reads[k]) {
      ++readers[slot];
      reader[slot] = k;
    }
  }
  for (const int64_t output : graph.outputs) ++readers[output];
  size_t folded = 0;
  for (size_t j = 0; j < graph.nodes.size(); ++j) {
    TreeLayer* normLayer = calledLayer(graph.nodes[j], j, tree);
    auto* norm = normLayer ? dynamic_cast<torch::nn::BatchNorm2dImpl*>(normLayer->built.module.ptr().get()) : nullptr;
    if (!norm) continue;
    const int64_t i = NodeArgs(graph.nodes[j], j).tensor(1);
    TreeLayer* convLayer = calledLayer(graph.nodes[i], i, tree);
    auto* conv = convLayer ? dynamic_cast<torch::nn::Conv2dImpl*>(convLayer->built.module.ptr().get()) : nullptr;
    if (!conv || readers[i] != 1 || !foldable(*conv, *norm)) continue;
    auto fold = std::make_shared<FoldedConv>(convLayer->built, *conv, *norm);
    const int64_t x = NodeArgs(graph.nodes[i], i).tensor(1);
    // The conv's node computes both (and a ReLU after them) at inference; the others pass its value on.
    steps[i] = [fold, x, unfolded = steps[i]](GraphFrame& f) -> c10::IValue {
      return fold->active() ? c10::IValue(fold->run(f.values[x].toTensor())) : unfolded(f);
    };
    steps[j] = passing(fold, i, std::move(steps[j]));
    if (readers[j] == 1 && graph.nodes[reader[j]].op == "relu") {
      fold->takeRelu();
      steps[reader[j]] = passing(fold, j, std::move(steps[reader[j]]));
    }
    ++folded;
  }
  return folded;
}

}  // namespace firebrand
