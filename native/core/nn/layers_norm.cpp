// Normalisation layers: batch (1d, 2d, 3d), layer, group, instance and RMS norms.
#include <torch/nn.h>

#include "core/errors.h"
#include "core/nn/layer_row.h"
#include "core/nn/rms_norm.h"
#include "core/nn/sync_batch_norm.h"
#include "core/onnx/onnx_layers.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

template <typename BatchNorm, typename Options>
BuiltLayer batchNorm(ResolvedOptions& o, const char* layout) {
  const int64_t features = o.integer("numFeatures");
  auto options = Options(features).eps(o.number("eps")).momentum(o.number("momentum")).affine(o.flag("affine"));
  options.track_running_stats(o.flag("trackRunningStats"));
  return {torch::nn::AnyModule(BatchNorm(options)), std::string(layout) + " with C=" + std::to_string(features) +
                                                        " (numFeatures=" + std::to_string(features) + ")"};
}

BuiltLayer syncBatchNorm(ResolvedOptions& o) {
  const int64_t features = o.integer("numFeatures");
  auto options = torch::nn::BatchNormOptions(features).eps(o.number("eps")).momentum(o.number("momentum"));
  options.affine(o.flag("affine")).track_running_stats(o.flag("trackRunningStats"));
  return {torch::nn::AnyModule(SyncBatchNorm(options)),
          "[N, C, *] with C=" + std::to_string(features) + " (numFeatures=" + std::to_string(features) + ")"};
}

// torch.batch_norm / torch.instance_norm(x, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
// cudnn).
std::function<ScriptCall(ResolvedOptions&, const LayerScriptContext&)> runningStatsScript(const char* function) {
  return [function](ResolvedOptions& o, const LayerScriptContext& c) -> ScriptCall {
    return {std::string(function) + "(" + c.operands.at(0) + ", " + c.tensor("weight") + ", " + c.tensor("bias") +
            ", " + c.tensor("running_mean") + ", " + c.tensor("running_var") + ", " +
            (o.flag("trackRunningStats") ? "self.training" : "True") + ", " + scriptNumber(o.number("momentum")) +
            ", " + scriptNumber(o.number("eps")) + ", False)"};
  };
}

BuiltLayer layerNorm(ResolvedOptions& o) {
  const auto shape = o.integers("normalizedShape");
  return {torch::nn::AnyModule(torch::nn::LayerNorm(
              torch::nn::LayerNormOptions(shape).eps(o.number("eps")).elementwise_affine(o.flag("elementwiseAffine")))),
          "trailing dimensions " + shapeText(shape) + " (normalizedShape)"};
}

BuiltLayer groupNorm(ResolvedOptions& o) {
  const int64_t groups = o.integer("numGroups"), channels = o.integer("numChannels");
  return {torch::nn::AnyModule(torch::nn::GroupNorm(
              torch::nn::GroupNormOptions(groups, channels).eps(o.number("eps")).affine(o.flag("affine")))),
          "[N, C, *] with C=" + std::to_string(channels) + " (numChannels=" + std::to_string(channels) + ")"};
}

BuiltLayer instanceNorm2d(ResolvedOptions& o) {
  const int64_t features = o.integer("numFeatures");
  auto options = torch::nn::InstanceNorm2dOptions(features)
                     .eps(o.number("eps"))
                     .momentum(o.number("momentum"))
                     .affine(o.flag("affine"));
  options.track_running_stats(o.flag("trackRunningStats"));
  return {torch::nn::AnyModule(torch::nn::InstanceNorm2d(options)),
          "[N, C, H, W] with C=" + std::to_string(features) + " (numFeatures=" + std::to_string(features) + ")"};
}

// torch.nn.RMSNorm (PyTorch 2.4), a weight over F.rmsNorm's math (rms_norm.h).
class RMSNormImpl : public torch::nn::Cloneable<RMSNormImpl> {
 public:
  RMSNormImpl(std::vector<int64_t> shape, std::optional<double> eps, bool affine)
      : shape_(std::move(shape)), eps_(eps), affine_(affine) {
    reset();
  }
  void reset() override {
    if (affine_) weight = register_parameter("weight", at::ones(shape_));
  }
  at::Tensor forward(const at::Tensor& input) {
    return rmsNorm(input, shape_, affine_ ? c10::optional<at::Tensor>(weight) : c10::nullopt, eps_, "nn.RMSNorm");
  }
  at::Tensor weight;

 private:
  std::vector<int64_t> shape_;
  std::optional<double> eps_;
  bool affine_;
};
TORCH_MODULE(RMSNorm);

BuiltLayer rmsNormLayer(ResolvedOptions& o) {
  const auto shape = o.integers("normalizedShape");
  return {torch::nn::AnyModule(RMSNorm(shape, o.optionalNumber("eps"), o.flag("elementwiseAffine"))),
          "trailing dimensions " + shapeText(shape) + " (normalizedShape)"};
}

ScriptCall rmsNormLayerScript(ResolvedOptions& o, const LayerScriptContext& c) {
  return {rmsNormScript(c.operands.at(0), o.integers("normalizedShape").size(),
                        o.flag("elementwiseAffine") ? c.tensor("weight") : "None", o.optionalNumber("eps"))};
}

at::ScalarType inputType(const OnnxLayerCall& c) { return c.examples.at(0).toTensor().scalar_type(); }

// Batch norms in the exported (eval) model: their running statistics.
OnnxValue batchNormOnnx(ResolvedOptions& o, const OnnxLayerCall& c) {
  if (!o.flag("trackRunningStats")) {
    throw NotExportable(
        "a batch norm without running statistics (trackRunningStats: false) normalizes by each batch; "
        "ONNX's BatchNormalization reads kept statistics");
  }
  return {onnxBatchNorm(c.b, c.operands.at(0), o.integer("numFeatures"), c.tensor("weight"), c.tensor("bias"),
                        c.tensor("running_mean"), c.tensor("running_var"), o.number("eps"), inputType(c))};
}

// An instance norm with running statistics uses them in eval mode; without, each sample's own.
OnnxValue instanceNormOnnx(ResolvedOptions& o, const OnnxLayerCall& c) {
  if (o.flag("trackRunningStats")) return batchNormOnnx(o, c);
  const int64_t features = o.integer("numFeatures");
  const auto options = at::TensorOptions().dtype(inputType(c));
  const std::string weight = c.tensor("weight"), bias = c.tensor("bias");
  const std::string scale = weight.empty() ? c.b.constant(at::ones({features}, options)) : weight;
  const std::string shift = bias.empty() ? c.b.constant(at::zeros({features}, options)) : bias;
  return {c.b.op("InstanceNormalization", {c.operands.at(0), scale, shift}, {{"epsilon", o.number("eps")}})};
}

OnnxValue layerNormOnnx(ResolvedOptions& o, const OnnxLayerCall& c) {
  return {onnxLayerNorm(c.b, c.operands.at(0), o.integers("normalizedShape"), c.tensor("weight"), c.tensor("bias"),
                        o.number("eps"), inputType(c))};
}

OnnxValue groupNormOnnx(ResolvedOptions& o, const OnnxLayerCall& c) {
  return {onnxGroupNorm(c.b, c.operands.at(0), c.examples.at(0).toTensor().dim(), o.integer("numGroups"),
                        c.tensor("weight"), c.tensor("bias"), o.number("eps"), inputType(c))};
}

OnnxValue rmsNormOnnx(ResolvedOptions& o, const OnnxLayerCall& c) {
  return {onnxRmsNorm(c.b, c.operands.at(0), o.integers("normalizedShape").size(), c.tensor("weight"),
                      o.optionalNumber("eps"), inputType(c))};
}

}  // namespace

LayerRows normLayers() {
  using namespace torch::nn;
  return {
      {"batchNorm1d",
       [](ResolvedOptions& o) { return batchNorm<BatchNorm1d, BatchNorm1dOptions>(o, "[N, C] or [N, C, L]"); },
       runningStatsScript("torch.batch_norm"), batchNormOnnx},
      {"batchNorm2d", [](ResolvedOptions& o) { return batchNorm<BatchNorm2d, BatchNorm2dOptions>(o, "[N, C, H, W]"); },
       runningStatsScript("torch.batch_norm"), batchNormOnnx},
      {"batchNorm3d",
       [](ResolvedOptions& o) { return batchNorm<BatchNorm3d, BatchNorm3dOptions>(o, "[N, C, D, H, W]"); },
       runningStatsScript("torch.batch_norm"), batchNormOnnx},
      // Eval mode (scripts and ONNX run it so) is BatchNorm's.
      {"syncBatchNorm", syncBatchNorm, runningStatsScript("torch.batch_norm"), batchNormOnnx},
      {"instanceNorm2d", instanceNorm2d, runningStatsScript("torch.instance_norm"), instanceNormOnnx},
      {"layerNorm", layerNorm,
       [](ResolvedOptions& o, const LayerScriptContext& c) -> ScriptCall {
         return {"torch.layer_norm(" + c.operands.at(0) + ", " + scriptList(o.integers("normalizedShape")) + ", " +
                 c.tensor("weight") + ", " + c.tensor("bias") + ", " + scriptNumber(o.number("eps")) + ")"};
       },
       layerNormOnnx},
      {"groupNorm", groupNorm,
       [](ResolvedOptions& o, const LayerScriptContext& c) -> ScriptCall {
         return {"torch.group_norm(" + c.operands.at(0) + ", " + std::to_string(o.integer("numGroups")) + ", " +
                 c.tensor("weight") + ", " + c.tensor("bias") + ", " + scriptNumber(o.number("eps")) + ")"};
       },
       groupNormOnnx},
      {"rmsNorm", rmsNormLayer, rmsNormLayerScript, rmsNormOnnx},
  };
}

}  // namespace firebrand
