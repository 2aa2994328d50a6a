#include "core/nn/layer_factory.h"

#include <torch/nn/modules.h>

#include <functional>
#include <limits>
#include <map>

#include "core/errors.h"
#include "core/nn/lora.h"
#include "core/nn/attention_layer.h"
#include "core/nn/recurrent_layers.h"
#include "core/options/resolved_options.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

using Builder = std::function<BuiltLayer(ResolvedOptions&)>;

template <typename Module>
BuiltLayer layer(Module module, std::string expectedInput) {
  return {torch::nn::AnyModule(std::move(module)), std::move(expectedInput)};
}

template <size_t N>
torch::ExpandingArray<N> sizes(const std::vector<int64_t>& values) {
  return torch::ExpandingArray<N>(c10::IntArrayRef(values));
}

torch::ExpandingArray<2> pair(const std::vector<int64_t>& values) { return sizes<2>(values); }

std::string count(int64_t value) { return std::to_string(value); }

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

// Max and average pooling over N spatial dimensions (stride defaults to the kernel, in TypeScript).
template <size_t N, typename Pool, typename Options>
BuiltLayer maxPool(ResolvedOptions& options, const char* layout) {
  const auto kernel = options.integers("kernelSize", N);
  const auto stride = options.integers("stride", N);
  const auto padding = options.integers("padding", N);
  const auto dilation = options.integers("dilation", N);
  const bool ceilMode = options.flag("ceilMode");
  return layer(Pool(Options(sizes<N>(kernel)).stride(sizes<N>(stride)).padding(sizes<N>(padding)).dilation(sizes<N>(dilation)).ceil_mode(ceilMode)),
               layout);
}

template <size_t N, typename Pool, typename Options>
BuiltLayer avgPool(ResolvedOptions& options, const char* layout) {
  const auto kernel = options.integers("kernelSize", N);
  const auto stride = options.integers("stride", N);
  const auto padding = options.integers("padding", N);
  const bool ceilMode = options.flag("ceilMode");
  const bool countIncludePad = options.flag("countIncludePad");
  return layer(Pool(Options(sizes<N>(kernel)).stride(sizes<N>(stride)).padding(sizes<N>(padding)).ceil_mode(ceilMode).count_include_pad(countIncludePad)),
               layout);
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

// What conv1d/3d and the transposed convolutions share: conv2d's options, per spatial dimension.
struct ConvArgs {
  int64_t in, out, groups;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool bias;
  std::string expected(const char* layout) const { return std::string(layout) + " with C=" + count(in) + " (inChannels=" + count(in) + ")"; }
};

ConvArgs convArgs(ResolvedOptions& options, size_t n) {
  return {options.integer("inChannels"), options.integer("outChannels"), options.integer("groups"),
          options.integers("kernelSize", n), options.integers("stride", n), options.integers("padding", n),
          options.integers("dilation", n), options.flag("bias")};
}

template <size_t N, typename Conv, typename Options>
BuiltLayer convNd(ResolvedOptions& options, const char* layout) {
  const ConvArgs c = convArgs(options, N);
  return layer(Conv(Options(c.in, c.out, sizes<N>(c.kernel)).stride(sizes<N>(c.stride)).padding(sizes<N>(c.padding)).dilation(sizes<N>(c.dilation)).groups(c.groups).bias(c.bias)),
               c.expected(layout));
}

template <size_t N, typename Conv, typename Options>
BuiltLayer convTransposeNd(ResolvedOptions& options, const char* layout) {
  const ConvArgs c = convArgs(options, N);
  const auto outputPadding = options.integers("outputPadding", N);
  return layer(Conv(Options(c.in, c.out, sizes<N>(c.kernel))
                        .stride(sizes<N>(c.stride))
                        .padding(sizes<N>(c.padding))
                        .output_padding(sizes<N>(outputPadding))
                        .groups(c.groups)
                        .bias(c.bias)
                        .dilation(sizes<N>(c.dilation))),
               c.expected(layout));
}

template <size_t N, typename Pool, typename Options>
BuiltLayer adaptivePool(ResolvedOptions& options, const char* layout) {
  const auto size = options.integers("outputSize", N);
  if constexpr (N == 1) {
    return layer(Pool(Options(sizes<1>(size))), layout);
  } else {
    return layer(Pool(Options(torch::ExpandingArrayWithOptionalElem<N>(std::vector<c10::optional<int64_t>>(size.begin(), size.end())))), layout);
  }
}

BuiltLayer groupNorm(ResolvedOptions& options) {
  const int64_t groups = options.integer("numGroups");
  const int64_t channels = options.integer("numChannels");
  const double eps = options.number("eps");
  const bool affine = options.flag("affine");
  return layer(torch::nn::GroupNorm(torch::nn::GroupNormOptions(groups, channels).eps(eps).affine(affine)),
               "[N, C, *] with C=" + count(channels) + " (numChannels=" + count(channels) + ")");
}

BuiltLayer instanceNorm2d(ResolvedOptions& options) {
  const int64_t features = options.integer("numFeatures");
  const double eps = options.number("eps");
  const double momentum = options.number("momentum");
  const bool affine = options.flag("affine");
  const bool trackRunningStats = options.flag("trackRunningStats");
  return layer(torch::nn::InstanceNorm2d(torch::nn::InstanceNorm2dOptions(features).eps(eps).momentum(momentum).affine(affine).track_running_stats(trackRunningStats)),
               "[N, C, H, W] with C=" + count(features) + " (numFeatures=" + count(features) + ")");
}

// torch.finfo(dtype).eps.
double machineEpsilon(at::ScalarType dtype) {
  switch (dtype) {
    case at::kDouble: return std::numeric_limits<double>::epsilon();
    case at::kHalf: return 0.0009765625;
    case at::kBFloat16: return 0.0078125;
    default: return std::numeric_limits<float>::epsilon();
  }
}

// torch.nn.RMSNorm (PyTorch 2.4): x / sqrt(mean(x², trailing dims) + eps) * weight; eps
// unset means the input dtype's machine epsilon, as torch.finfo(dtype).eps.
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
    std::vector<int64_t> dims;
    for (size_t i = 0; i < shape_.size(); ++i) dims.push_back(-1 - static_cast<int64_t>(i));
    const double eps = eps_ ? *eps_ : machineEpsilon(input.scalar_type());
    at::Tensor out = input * at::rsqrt(input.pow(2).mean(dims, /*keepdim=*/true) + eps);
    return affine_ ? out * weight : out;
  }
  at::Tensor weight;

 private:
  std::vector<int64_t> shape_;
  std::optional<double> eps_;
  bool affine_;
};
TORCH_MODULE(RMSNorm);

BuiltLayer rmsNorm(ResolvedOptions& options) {
  const auto shape = options.integers("normalizedShape");
  const auto eps = options.optionalNumber("eps");
  const bool affine = options.flag("elementwiseAffine");
  return layer(RMSNorm(shape, eps, affine), "trailing dimensions " + shapeText(shape) + " (normalizedShape)");
}

BuiltLayer dropout2d(ResolvedOptions& options) {
  const double p = options.number("p");
  return layer(torch::nn::Dropout2d(torch::nn::Dropout2dOptions(p)), "[N, C, H, W]");
}

BuiltLayer upsample(ResolvedOptions& options) {
  auto upsampleOptions = torch::nn::UpsampleOptions();
  if (options.has("size")) upsampleOptions.size(options.integers("size", 2));
  if (options.has("scaleFactor")) {
    const double scale = options.number("scaleFactor");
    upsampleOptions.scale_factor(std::vector<double>{scale, scale});
  }
  const bool alignCorners = options.flag("alignCorners");
  if (options.text("mode") == "nearest") {
    upsampleOptions.mode(torch::kNearest);
  } else {
    upsampleOptions.mode(torch::kBilinear).align_corners(alignCorners);
  }
  return layer(torch::nn::Upsample(upsampleOptions), "[N, C, H, W]");
}

BuiltLayer pixelShuffle(ResolvedOptions& options) {
  const int64_t factor = options.integer("upscaleFactor");
  return layer(torch::nn::PixelShuffle(torch::nn::PixelShuffleOptions(factor)),
               "[N, C, H, W] with C divisible by " + count(factor * factor) + " (upscaleFactor²)");
}

BuiltLayer unflatten(ResolvedOptions& options) {
  const int64_t dim = options.integer("dim");
  const auto sizes = options.integers("unflattenedSize");
  return layer(torch::nn::Unflatten(torch::nn::UnflattenOptions(dim, sizes)),
               "dimension " + count(dim) + " of size " + count(c10::multiply_integers(sizes)));
}

BuiltLayer leakyRelu(ResolvedOptions& options) {
  const double slope = options.number("negativeSlope");
  return layer(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(slope)), "any shape");
}

BuiltLayer elu(ResolvedOptions& options) {
  const double alpha = options.number("alpha");
  return layer(torch::nn::ELU(torch::nn::ELUOptions().alpha(alpha)), "any shape");
}

BuiltLayer softplus(ResolvedOptions& options) {
  const double beta = options.number("beta");
  const double threshold = options.number("threshold");
  return layer(torch::nn::Softplus(torch::nn::SoftplusOptions().beta(beta).threshold(threshold)), "any shape");
}

BuiltLayer hardtanh(ResolvedOptions& options) {
  const double low = options.number("minVal");
  const double high = options.number("maxVal");
  return layer(torch::nn::Hardtanh(torch::nn::HardtanhOptions().min_val(low).max_val(high)), "any shape");
}

BuiltLayer prelu(ResolvedOptions& options) {
  const int64_t parameters = options.integer("numParameters");
  const double init = options.number("init");
  return layer(torch::nn::PReLU(torch::nn::PReLUOptions().num_parameters(parameters).init(init)),
               parameters == 1 ? "any shape" : "[N, C, *] with C=" + count(parameters) + " (numParameters)");
}

const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> table = {
      {"linear", linear},
      {"conv2d", conv2d},
      {"maxPool2d", [](ResolvedOptions& o) { return maxPool<2, torch::nn::MaxPool2d, torch::nn::MaxPool2dOptions>(o, "[N, C, H, W]"); }},
      {"avgPool2d", [](ResolvedOptions& o) { return avgPool<2, torch::nn::AvgPool2d, torch::nn::AvgPool2dOptions>(o, "[N, C, H, W]"); }},
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
      {"conv1d", [](ResolvedOptions& o) { return convNd<1, torch::nn::Conv1d, torch::nn::Conv1dOptions>(o, "[N, C, L]"); }},
      {"conv3d", [](ResolvedOptions& o) { return convNd<3, torch::nn::Conv3d, torch::nn::Conv3dOptions>(o, "[N, C, D, H, W]"); }},
      {"convTranspose1d", [](ResolvedOptions& o) { return convTransposeNd<1, torch::nn::ConvTranspose1d, torch::nn::ConvTranspose1dOptions>(o, "[N, C, L]"); }},
      {"convTranspose2d", [](ResolvedOptions& o) { return convTransposeNd<2, torch::nn::ConvTranspose2d, torch::nn::ConvTranspose2dOptions>(o, "[N, C, H, W]"); }},
      {"maxPool1d", [](ResolvedOptions& o) { return maxPool<1, torch::nn::MaxPool1d, torch::nn::MaxPool1dOptions>(o, "[N, C, L]"); }},
      {"avgPool1d", [](ResolvedOptions& o) { return avgPool<1, torch::nn::AvgPool1d, torch::nn::AvgPool1dOptions>(o, "[N, C, L]"); }},
      {"adaptiveAvgPool1d", [](ResolvedOptions& o) { return adaptivePool<1, torch::nn::AdaptiveAvgPool1d, torch::nn::AdaptiveAvgPool1dOptions>(o, "[N, C, L]"); }},
      {"adaptiveAvgPool2d", [](ResolvedOptions& o) { return adaptivePool<2, torch::nn::AdaptiveAvgPool2d, torch::nn::AdaptiveAvgPool2dOptions>(o, "[N, C, H, W]"); }},
      {"adaptiveMaxPool2d", [](ResolvedOptions& o) { return adaptivePool<2, torch::nn::AdaptiveMaxPool2d, torch::nn::AdaptiveMaxPool2dOptions>(o, "[N, C, H, W]"); }},
      {"batchNorm3d",
       [](ResolvedOptions& o) {
         return batchNorm<torch::nn::BatchNorm3d, torch::nn::BatchNorm3dOptions>(o, "[N, C, D, H, W]");
       }},
      {"groupNorm", groupNorm},
      {"instanceNorm2d", instanceNorm2d},
      {"rmsNorm", rmsNorm},
      {"dropout2d", dropout2d},
      {"identity", elementwise<torch::nn::Identity>},
      {"upsample", upsample},
      {"pixelShuffle", pixelShuffle},
      {"unflatten", unflatten},
      {"leakyRelu", leakyRelu},
      {"elu", elu},
      {"silu", elementwise<torch::nn::SiLU>},
      {"mish", elementwise<torch::nn::Mish>},
      {"softplus", softplus},
      {"hardswish", [](ResolvedOptions&) { return layer(torch::nn::Functional([](const at::Tensor& x) { return at::hardswish(x); }), "any shape"); }},
      {"relu6", elementwise<torch::nn::ReLU6>},
      {"hardsigmoid", [](ResolvedOptions&) { return layer(torch::nn::Functional([](const at::Tensor& x) { return at::hardsigmoid(x); }), "any shape"); }},
      {"hardtanh", hardtanh},
      {"prelu", prelu},
      {"lstm", buildLstm},
      {"gru", buildGru},
      {"rnn", buildRnn},
      {"multiheadAttention", buildMultiheadAttention},
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
    if (layer.lora) return layer.module.forward(input) + loraDelta(*layer.lora, input, layer.module.ptr()->is_training());
    return layer.module.forward(input);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    // libtorch says "index out of range in self": name the index and the table's size.
    if (const auto* embedding = dynamic_cast<const torch::nn::EmbeddingImpl*>(layer.module.ptr().get());
        embedding && !input.is_floating_point() && input.numel() > 0) {
      const int64_t rows = embedding->options.num_embeddings();
      const int64_t low = input.min().item<int64_t>(), high = input.max().item<int64_t>();
      if (low < 0 || high >= rows) {
        throw InvalidArgument(owner + ": index " + std::to_string(high >= rows ? high : low) + " in its input " + shapeAndDtypeText(input) +
                              " is outside [0, " + std::to_string(rows - 1) + "] (numEmbeddings=" + std::to_string(rows) + ")");
      }
    }
    // libtorch says "mat1 and mat2 must have the same dtype": name the dtype, not the shape.
    const auto parameters = layer.module.ptr()->parameters();
    if (!input.is_floating_point() && !parameters.empty() && parameters.front().is_floating_point()) {
      throw InvalidArgument(owner + " takes floating-point inputs but got " + shapeAndDtypeText(input) +
                            " (its weights are " + dtypeText(parameters.front().scalar_type()) +
                            "): give the inputs as a Float32Array, or convert them with transforms.cast({ dtype: 'float32' })");
    }
    throw ShapeMismatch(owner + " cannot take an input of shape " + shapeAndDtypeText(input) + "; it expects " +
                        layer.expectedInput + ". libtorch: " + torchReason(error));
  }
}

}  // namespace firebrand
