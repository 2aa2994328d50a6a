#include "core/nn/layer_factory.h"

#include <torch/nn/modules.h>

#include <functional>
#include <limits>
#include <map>

#include "core/errors.h"
#include "core/options/resolved_options.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

using Builder = std::function<BuiltLayer(ResolvedOptions&)>;

template <typename Module>
BuiltLayer layer(Module module, std::string expectedInput) {
  return {torch::nn::AnyModule(std::move(module)), std::move(expectedInput)};
}

torch::ExpandingArray<2> pair(const std::vector<int64_t>& values) {
  return torch::ExpandingArray<2>({values[0], values[1]});
}

BuiltLayer linear(ResolvedOptions& options) {
  const int64_t in = options.integer("inFeatures");
  const int64_t out = options.integer("outFeatures");
  const bool bias = options.flag("bias");
  return layer(torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias)),
               "[*, " + std::to_string(in) + "] (inFeatures=" + std::to_string(in) + ")");
}

BuiltLayer conv2d(ResolvedOptions& options) {
  const int64_t in = options.integer("inChannels");
  const int64_t out = options.integer("outChannels");
  const auto kernel = options.integers("kernelSize", 2);
  const auto stride = options.integers("stride", 2);
  const auto padding = options.integers("padding", 2);
  const auto dilation = options.integers("dilation", 2);
  const int64_t groups = options.integer("groups");
  const bool bias = options.flag("bias");
  auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, pair(kernel))
                                    .stride(pair(stride))
                                    .padding(pair(padding))
                                    .dilation(pair(dilation))
                                    .groups(groups)
                                    .bias(bias));
  return layer(conv, "[N, " + std::to_string(in) + ", H, W] (inChannels=" + std::to_string(in) + ")");
}

BuiltLayer maxPool2d(ResolvedOptions& options) {
  const auto kernel = options.integers("kernelSize", 2);
  const auto stride = options.integers("stride", 2);
  const auto padding = options.integers("padding", 2);
  const auto dilation = options.integers("dilation", 2);
  const bool ceilMode = options.flag("ceilMode");
  return layer(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(pair(kernel))
                                        .stride(pair(stride))
                                        .padding(pair(padding))
                                        .dilation(pair(dilation))
                                        .ceil_mode(ceilMode)),
               "[N, C, H, W]");
}

BuiltLayer avgPool2d(ResolvedOptions& options) {
  const auto kernel = options.integers("kernelSize", 2);
  const auto stride = options.integers("stride", 2);
  const auto padding = options.integers("padding", 2);
  const bool ceilMode = options.flag("ceilMode");
  const bool countIncludePad = options.flag("countIncludePad");
  return layer(torch::nn::AvgPool2d(torch::nn::AvgPool2dOptions(pair(kernel))
                                        .stride(pair(stride))
                                        .padding(pair(padding))
                                        .ceil_mode(ceilMode)
                                        .count_include_pad(countIncludePad)),
               "[N, C, H, W]");
}

template <typename BatchNorm, typename Options>
BuiltLayer batchNorm(ResolvedOptions& options, const char* layout) {
  const int64_t features = options.integer("numFeatures");
  const double eps = options.number("eps");
  const double momentum = options.number("momentum");
  const bool affine = options.flag("affine");
  const bool trackRunningStats = options.flag("trackRunningStats");
  return layer(BatchNorm(Options(features)
                             .eps(eps)
                             .momentum(momentum)
                             .affine(affine)
                             .track_running_stats(trackRunningStats)),
               std::string(layout) + " with C=" + std::to_string(features) +
                   " (numFeatures=" + std::to_string(features) + ")");
}

BuiltLayer layerNorm(ResolvedOptions& options) {
  const auto shape = options.integers("normalizedShape");
  const double eps = options.number("eps");
  const bool affine = options.flag("elementwiseAffine");
  return layer(torch::nn::LayerNorm(torch::nn::LayerNormOptions(shape).eps(eps).elementwise_affine(affine)),
               "trailing dimensions " + shapeText(shape) + " (normalizedShape)");
}

BuiltLayer dropout(ResolvedOptions& options) {
  const double p = options.number("p");
  return layer(torch::nn::Dropout(torch::nn::DropoutOptions(p)), "any shape");
}

BuiltLayer flatten(ResolvedOptions& options) {
  const int64_t start = options.integer("startDim");
  const int64_t end = options.integer("endDim");
  return layer(torch::nn::Flatten(torch::nn::FlattenOptions().start_dim(start).end_dim(end)),
               "at least " + std::to_string(start + 1) + " dimensions");
}

BuiltLayer gelu(ResolvedOptions& options) {
  const std::string approximate = options.text("approximate");
  return layer(torch::nn::GELU(torch::nn::GELUOptions().approximate(approximate)), "any shape");
}

template <typename Module>
BuiltLayer elementwise(ResolvedOptions&) {
  return layer(Module(), "any shape");
}

template <typename Module, typename Options>
BuiltLayer softmaxLike(ResolvedOptions& options) {
  const int64_t dim = options.integer("dim");
  return layer(Module(Options(dim)), "any shape with dimension " + std::to_string(dim));
}

BuiltLayer embedding(ResolvedOptions& options) {
  const int64_t count = options.integer("numEmbeddings");
  const int64_t dim = options.integer("embeddingDim");
  auto embeddingOptions = torch::nn::EmbeddingOptions(count, dim);
  if (const auto padding = options.optionalInteger("paddingIdx")) embeddingOptions.padding_idx(*padding);
  return layer(torch::nn::Embedding(embeddingOptions),
               "integer indices in [0, " + std::to_string(count - 1) + "] (numEmbeddings=" +
                   std::to_string(count) + ")");
}

const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> table = {
      {"linear", linear},
      {"conv2d", conv2d},
      {"maxPool2d", maxPool2d},
      {"avgPool2d", avgPool2d},
      {"batchNorm1d",
       [](ResolvedOptions& o) {
         return batchNorm<torch::nn::BatchNorm1d, torch::nn::BatchNorm1dOptions>(o, "[N, C] or [N, C, L]");
       }},
      {"batchNorm2d",
       [](ResolvedOptions& o) {
         return batchNorm<torch::nn::BatchNorm2d, torch::nn::BatchNorm2dOptions>(o, "[N, C, H, W]");
       }},
      {"layerNorm", layerNorm},
      {"dropout", dropout},
      {"flatten", flatten},
      {"relu", elementwise<torch::nn::ReLU>},
      {"gelu", gelu},
      {"tanh", elementwise<torch::nn::Tanh>},
      {"sigmoid", elementwise<torch::nn::Sigmoid>},
      {"softmax", softmaxLike<torch::nn::Softmax, torch::nn::SoftmaxOptions>},
      {"logSoftmax", softmaxLike<torch::nn::LogSoftmax, torch::nn::LogSoftmaxOptions>},
      {"embedding", embedding},
  };
  return table;
}

}  // namespace

BuiltLayer buildLayer(const LayerSpec& spec, const std::string& owner) {
  const auto& table = builders();
  const auto it = table.find(spec.type);
  if (it == table.end()) throw InvalidState("firebrand bug: " + owner + ": layer type '" + spec.type + "' reached C++ unresolved");
  ResolvedOptions options(owner, spec.options);
  BuiltLayer built = it->second(options);
  options.finish();
  return built;
}

at::Tensor runLayer(BuiltLayer& layer, const at::Tensor& input, const std::string& owner) {
  try {
    return layer.module.forward(input);
  } catch (const c10::Error& error) {
    // libtorch says "mat1 and mat2 must have the same dtype": name the dtype, not the shape.
    const auto parameters = layer.module.ptr()->parameters();
    if (!input.is_floating_point() && !parameters.empty() && parameters.front().is_floating_point()) {
      throw InvalidArgument(owner + " takes floating-point inputs but got " + shapeAndDtypeText(input) +
                            " (its weights are " + dtypeText(parameters.front().scalar_type()) +
                            "): give the inputs as a Float32Array, or convert them with transforms.cast({ dtype: 'float32' })");
    }
    throw ShapeMismatch(owner + " cannot take an input of shape " + shapeAndDtypeText(input) + "; it expects " +
                        layer.expectedInput + ". libtorch: " + error.what_without_backtrace());
  }
}

}  // namespace firebrand
