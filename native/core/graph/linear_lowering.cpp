#include "core/graph/linear_lowering.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "core/compat/torch_compat.h"
#include "core/graph/inference_folding.h"
#include "core/graph/lowered_steps.h"
#include "core/graph/onednn_linear.h"
#include "core/nn/cpu_float.h"
#include "core/nn/linear_layer.h"
#include "core/nn/streamed_linear.h"
#include "core/runtime/onednn_api.h"

namespace firebrand {
namespace {

// Row counts kept per layer before the oldest is dropped (a last batch smaller than the others).
constexpr size_t kRowCountsKept = 4;
// Weights packed at most: a packed copy is held beside the weight, which training and export read. Past it
// (a language model's large projections and head) the layer runs as written, its product oneDNN's matmul
// reading the weight in place (nn/onednn_plain_matmul.h), ~0.93x the packed one's rate at 128 rows. Packing
// every layer, TinyLlama-1.1B's first 3-token predict peaked at 8.4 GB RSS (its weights are 4.4 GB) and took
// 21 s on this project's VM, whose page faults are slow; 4.6 GB and 0.9 s so.
constexpr int64_t kPackedWeightBytesMost = int64_t{8} << 20;

// A linear layer as it runs lowered, its matmuls kept while the weight and bias keep their versions.
class LoweredLinear {
 public:
  static constexpr bool kTakesResidual = false;
  static constexpr bool kTakesActivation = true;

  LoweredLinear(BuiltLayer& layer, LinearLayerImpl& linear) : layer_(layer), linear_(linear) {}

  bool runsOn(const c10::IValue& input) const {
    // Without oneDNN 3's matmul the layer runs as written (oneDNN's sgemm, inside linearForward).
    if (onednn::matmulApi() == nullptr || !predictionLoweringActive() || layer_.lora || linear_.quantized() ||
        !input.isTensor())
      return false;
    const at::Tensor& x = input.toTensor();
    const at::Tensor& weight = linear_.weight;
    return x.dim() >= 1 && x.size(-1) == weight.size(1) && x.numel() > 0 && isCpuFloat(x) && isCpuFloat(weight) &&
           static_cast<int64_t>(weight.nbytes()) <= kPackedWeightBytesMost &&
           (!linear_.bias.defined() || isCpuFloat(linear_.bias)) && !streamedLinearFits(x, weight, linear_.bias) &&
           !compat::autocastEnabled(c10::DeviceType::CPU);
  }

  void takeActivation(FusedActivation activation) { activation_ = activation; }

  at::Tensor run(const at::Tensor& input) {
    const at::Tensor& weight = linear_.weight;
    const at::Tensor rows = input.reshape({-1, weight.size(1)}).contiguous();
    std::vector<int64_t> shape = input.sizes().vec();
    shape.back() = weight.size(0);
    std::lock_guard<std::mutex> lock(mutex_);
    if (OnednnLinear* matmul = matmulFor(rows.size(0))) return matmul->run(rows).view(shape);
    // oneDNN refused this row count: libtorch's way, the activation after it.
    at::Tensor out =
        linearForward(input, weight.detach(), linear_.bias.defined() ? linear_.bias.detach() : at::Tensor());
    return applyActivation(out, activation_);
  }

 private:
  struct Made {
    int64_t rows;
    std::unique_ptr<OnednnLinear> matmul;  // null where oneDNN refused this count
  };

  int64_t sourceVersion() const {
    int64_t version = 0;
    for (const at::Tensor* t : {&linear_.weight, &linear_.bias}) {
      if (t->defined()) version += static_cast<int64_t>(t->_version()) + reinterpret_cast<intptr_t>(t->data_ptr());
    }
    return version;
  }

  OnednnLinear* matmulFor(int64_t rows) {
    const int64_t version = sourceVersion();
    if (version != version_) made_.clear();
    version_ = version;
    auto found = std::find_if(made_.begin(), made_.end(), [&](const Made& m) { return m.rows == rows; });
    if (found == made_.end()) {
      if (made_.size() == kRowCountsKept) made_.erase(made_.begin());
      const auto sibling = std::find_if(made_.begin(), made_.end(), [](const Made& m) { return m.matmul != nullptr; });
      const at::Tensor bias = linear_.bias.defined() ? linear_.bias.detach() : at::Tensor();
      made_.push_back({rows, OnednnLinear::make(rows, linear_.weight.detach(), bias, activation_,
                                                sibling == made_.end() ? nullptr : sibling->matmul.get())});
      found = std::prev(made_.end());
    }
    return found->matmul.get();
  }

  BuiltLayer& layer_;
  LinearLayerImpl& linear_;
  std::mutex mutex_;
  std::vector<Made> made_;
  FusedActivation activation_ = FusedActivation::None;
  int64_t version_ = 0;
};

}  // namespace

size_t lowerLinearLayers(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                         std::vector<OpRun>& steps) {
  return lowerLayerCalls<LinearLayerImpl>(graph, reads, tree, steps, [](BuiltLayer& layer, LinearLayerImpl& linear) {
    return std::make_shared<LoweredLinear>(layer, linear);
  });
}

}  // namespace firebrand
