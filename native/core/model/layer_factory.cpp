#include "core/model/layer_factory.h"

#include <torch/nn/modules.h>

#include <functional>
#include <limits>
#include <map>

#include "core/errors.h"
#include "core/options/option_reader.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

using Builder = std::function<BuiltLayer(OptionReader&)>;

template <typename Module>
BuiltLayer layer(Module module, std::string expectedInput) {
  return {torch::nn::AnyModule(std::move(module)), std::move(expectedInput)};
}

torch::ExpandingArray<2> pair(const std::vector<int64_t>& values) {
  return torch::ExpandingArray<2>({values[0], values[1]});
}

BuiltLayer linear(OptionReader& options) {
  const int64_t in = options.positiveInt("inFeatures");
  const int64_t out = options.positiveInt("outFeatures");
  const bool bias = options.flag("bias", true);
  return layer(torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias)),
               "[*, " + std::to_string(in) + "] (inFeatures=" + std::to_string(in) + ")");
}

BuiltLayer conv2d(OptionReader& options) {
  const int64_t in = options.positiveInt("inChannels");
  const int64_t out = options.positiveInt("outChannels");
  const auto kernel = options.positiveInts("kernelSize", 2);
  const auto stride = options.positiveInts("stride", 2, {1, 1});
  const auto padding = options.nonNegativeInts("padding", 2, {0, 0});
  const auto dilation = options.positiveInts("dilation", 2, {1, 1});
  const int64_t groups = options.positiveInt("groups", 1);
  const bool bias = options.flag("bias", true);
  if (in % groups != 0 || out % groups != 0) {
    throw InvalidArgument(options.owner() + ": inChannels (" + std::to_string(in) +
                          ") and outChannels (" + std::to_string(out) +
                          ") must both be divisible by groups (" + std::to_string(groups) + ")");
  }
  auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, pair(kernel))
                                    .stride(pair(stride))
                                    .padding(pair(padding))
                                    .dilation(pair(dilation))
                                    .groups(groups)
                                    .bias(bias));
  return layer(conv, "[N, " + std::to_string(in) + ", H, W] (inChannels=" + std::to_string(in) + ")");
}

BuiltLayer maxPool2d(OptionReader& options) {
  const auto kernel = options.positiveInts("kernelSize", 2);
  const auto stride = options.positiveInts("stride", 2, kernel);
  const auto padding = options.nonNegativeInts("padding", 2, {0, 0});
  const auto dilation = options.positiveInts("dilation", 2, {1, 1});
  const bool ceilMode = options.flag("ceilMode", false);
  return layer(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(pair(kernel))
                                        .stride(pair(stride))
                                        .padding(pair(padding))
                                        .dilation(pair(dilation))
                                        .ceil_mode(ceilMode)),
               "[N, C, H, W]");
}

BuiltLayer avgPool2d(OptionReader& options) {
  const auto kernel = options.positiveInts("kernelSize", 2);
  const auto stride = options.positiveInts("stride", 2, kernel);
  const auto padding = options.nonNegativeInts("padding", 2, {0, 0});
  const bool ceilMode = options.flag("ceilMode", false);
  const bool countIncludePad = options.flag("countIncludePad", true);
  return layer(torch::nn::AvgPool2d(torch::nn::AvgPool2dOptions(pair(kernel))
                                        .stride(pair(stride))
                                        .padding(pair(padding))
                                        .ceil_mode(ceilMode)
                                        .count_include_pad(countIncludePad)),
               "[N, C, H, W]");
}

template <typename BatchNorm, typename Options>
BuiltLayer batchNorm(OptionReader& options, const char* layout) {
  const int64_t features = options.positiveInt("numFeatures");
  const double eps = options.number("eps", 1e-5, 0, kUnbounded);
  const double momentum = options.number("momentum", 0.1, 0, 1);
  const bool affine = options.flag("affine", true);
  const bool trackRunningStats = options.flag("trackRunningStats", true);
  return layer(BatchNorm(Options(features)
                             .eps(eps)
                             .momentum(momentum)
                             .affine(affine)
                             .track_running_stats(trackRunningStats)),
               std::string(layout) + " with C=" + std::to_string(features) +
                   " (numFeatures=" + std::to_string(features) + ")");
}

BuiltLayer layerNorm(OptionReader& options) {
  const auto shape = options.positiveShape("normalizedShape");
  const double eps = options.number("eps", 1e-5, 0, kUnbounded);
  const bool affine = options.flag("elementwiseAffine", true);
  return layer(torch::nn::LayerNorm(torch::nn::LayerNormOptions(shape).eps(eps).elementwise_affine(affine)),
               "trailing dimensions " + shapeText(shape) + " (normalizedShape)");
}

BuiltLayer dropout(OptionReader& options) {
  const double p = options.number("p", 0.5, 0, 1);
  return layer(torch::nn::Dropout(torch::nn::DropoutOptions(p)), "any shape");
}

BuiltLayer flatten(OptionReader& options) {
  const int64_t start = options.integer("startDim", 1);
  const int64_t end = options.integer("endDim", -1);
  return layer(torch::nn::Flatten(torch::nn::FlattenOptions().start_dim(start).end_dim(end)),
               "at least " + std::to_string(start + 1) + " dimensions");
}

BuiltLayer gelu(OptionReader& options) {
  const std::string approximate = options.choice("approximate", "none", {"none", "tanh"});
  return layer(torch::nn::GELU(torch::nn::GELUOptions().approximate(approximate)), "any shape");
}

template <typename Module>
BuiltLayer elementwise(OptionReader&) {
  return layer(Module(), "any shape");
}

template <typename Module, typename Options>
BuiltLayer softmaxLike(OptionReader& options) {
  const int64_t dim = options.integer("dim", -1);
  return layer(Module(Options(dim)), "any shape with dimension " + std::to_string(dim));
}

BuiltLayer embedding(OptionReader& options) {
  const int64_t count = options.positiveInt("numEmbeddings");
  const int64_t dim = options.positiveInt("embeddingDim");
  auto embeddingOptions = torch::nn::EmbeddingOptions(count, dim);
  if (const auto padding = options.optionalInteger("paddingIdx")) {
    if (*padding < -count || *padding >= count) {
      throw InvalidArgument(options.owner() + ": field 'paddingIdx' must be in [" +
                            std::to_string(-count) + ", " + std::to_string(count - 1) + "], got " +
                            std::to_string(*padding));
    }
    embeddingOptions.padding_idx(*padding);
  }
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
       [](OptionReader& o) {
         return batchNorm<torch::nn::BatchNorm1d, torch::nn::BatchNorm1dOptions>(o, "[N, C] or [N, C, L]");
       }},
      {"batchNorm2d",
       [](OptionReader& o) {
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

std::vector<std::string> knownLayerTypes() {
  std::vector<std::string> names;
  for (const auto& entry : builders()) names.push_back(entry.first);
  return names;
}

BuiltLayer buildLayer(const LayerSpec& spec, const std::string& owner) {
  const auto& table = builders();
  const auto it = table.find(spec.type);
  if (it == table.end()) {
    std::string message = owner + ": unknown layer type '" + spec.type + "'";
    const std::string suggestion = closestMatch(spec.type, knownLayerTypes());
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    message += "; known types: ";
    for (const auto& name : knownLayerTypes()) message += name + " ";
    message.pop_back();
    throw InvalidArgument(message);
  }
  OptionReader options(owner, spec.options);
  BuiltLayer built = it->second(options);
  options.finish();
  return built;
}

}  // namespace firebrand
