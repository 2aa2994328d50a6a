#include "core/graph/layer_norm_lowering.h"

#include <torch/nn/modules/normalization.h>

#include <memory>

#include "core/graph/inference_folding.h"
#include "core/graph/lowered_steps.h"
#include "core/nn/layer_norm_rows.h"

namespace firebrand {
namespace {

class LoweredLayerNorm {
 public:
  static constexpr bool kTakesResidual = false;
  static constexpr bool kTakesActivation = false;

  explicit LoweredLayerNorm(torch::nn::LayerNormImpl& norm) : norm_(norm) {}

  bool runsOn(const c10::IValue& input) const {
    const auto& shape = norm_.options.normalized_shape();
    return predictionLoweringActive() && input.isTensor() && shape.size() == 1 &&
           layerNormRowsFits(input.toTensor(), shape[0], norm_.weight, norm_.bias);
  }

  at::Tensor run(const at::Tensor& input) {
    return layerNormRows(input, norm_.weight, norm_.bias, norm_.options.eps());
  }

 private:
  torch::nn::LayerNormImpl& norm_;
};

}  // namespace

size_t lowerLayerNorms(const GraphSpec& graph, const std::vector<std::vector<int64_t>>& reads, ModuleTree& tree,
                       std::vector<OpRun>& steps) {
  return lowerLayerCalls<torch::nn::LayerNormImpl>(
      graph, reads, tree, steps,
      [](BuiltLayer&, torch::nn::LayerNormImpl& norm) { return std::make_shared<LoweredLayerNorm>(norm); });
}

}  // namespace firebrand
