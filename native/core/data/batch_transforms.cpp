#include "core/data/batch_transforms.h"

#include <ATen/ATen.h>

#include <map>

#include "core/errors.h"
#include "core/images/image_color.h"
#include "core/options/resolved_options.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

using Apply = std::function<at::Tensor(const at::Tensor&, at::Generator&)>;

// torchvision.transforms.Normalize on a batch: per channel (dimension 1).
Apply normalize(ResolvedOptions& options) {
  const std::vector<double> mean = options.numbers("mean");
  const std::vector<double> std = options.numbers("std");
  const std::string owner = options.owner();
  return [=](const at::Tensor& x, at::Generator&) {
    if (!x.is_floating_point()) {
      throw InvalidArgument(owner + ": needs floating-point values, got " + shapeAndDtypeText(x) +
                            "; put { name: 'cast', dtype: 'float32' } before it");
    }
    const int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
    for (const auto* values : {&mean, &std}) {
      if (values->size() != 1 && static_cast<int64_t>(values->size()) != channels) {
        throw ShapeMismatch(owner + ": " + std::to_string(values->size()) + " values for batches " + shapeText(x) +
                            " with " + std::to_string(channels) + " channels (dimension 1); " +
                            normalizeValuesAdvice(values->size(), channels, x.dim() >= 1 ? x.size(-1) : 0));
      }
    }
    std::vector<int64_t> channelShape(static_cast<size_t>(std::max<int64_t>(x.dim(), 1)), 1);
    if (x.dim() >= 2) channelShape[1] = -1;
    const auto options = at::TensorOptions().dtype(x.scalar_type());
    const at::Tensor meanTensor =
        at::tensor(mean, at::TensorOptions().dtype(at::kDouble)).to(options).view(channelShape);
    const at::Tensor stdTensor = at::tensor(std, at::TensorOptions().dtype(at::kDouble)).to(options).view(channelShape);
    return (x - meanTensor) / stdTensor;
  };
}

Apply cast(ResolvedOptions& options) {
  static const std::map<std::string, at::ScalarType> dtypes = {
      {"float32", at::kFloat}, {"float64", at::kDouble}, {"float16", at::kHalf}, {"bfloat16", at::kBFloat16},
      {"int64", at::kLong},    {"int32", at::kInt},      {"uint8", at::kByte}};
  const at::ScalarType dtype = dtypes.at(options.text("dtype"));
  return [dtype](const at::Tensor& x, at::Generator&) { return x.to(dtype); };
}

// Checks that a batch has spatial dimensions: [N, ..., H, W].
void requireImages(const std::string& owner, const at::Tensor& x) {
  if (x.dim() < 3) throw ShapeMismatch(owner + ": needs batches [N, ..., H, W], got " + shapeText(x));
}

// torchvision.transforms.RandomHorizontalFlip(p), drawn per sample.
Apply randomHorizontalFlip(ResolvedOptions& options) {
  const double p = options.number("p");
  const std::string owner = options.owner();
  return [=](const at::Tensor& x, at::Generator& generator) {
    requireImages(owner, x);
    std::vector<int64_t> perSample(static_cast<size_t>(x.dim()), 1);
    perSample[0] = x.size(0);
    const at::Tensor flip = (at::rand({x.size(0)}, generator) < p).view(perSample);
    return at::where(flip, x.flip({-1}), x);
  };
}

// torchvision.transforms.RandomCrop(size, padding): zero padding on every
// side, then an [h, w] window at an offset drawn per sample.
Apply randomCrop(ResolvedOptions& options) {
  const std::vector<int64_t> size = options.integers("size", 2);
  const int64_t padding = options.integer("padding");
  const std::string owner = options.owner();
  return [=](const at::Tensor& x, at::Generator& generator) {
    requireImages(owner, x);
    const at::Tensor padded = padding > 0 ? at::constant_pad_nd(x, {padding, padding, padding, padding}, 0) : x;
    const int64_t height = padded.size(-2);
    const int64_t width = padded.size(-1);
    if (size[0] > height || size[1] > width) {
      throw ShapeMismatch(owner + ": a crop of [" + std::to_string(size[0]) + ", " + std::to_string(size[1]) +
                          "] does not fit batches " + shapeText(x) + " padded by " + std::to_string(padding));
    }
    const at::Tensor top = at::randint(height - size[0] + 1, {x.size(0)}, generator, at::kLong);
    const at::Tensor left = at::randint(width - size[1] + 1, {x.size(0)}, generator, at::kLong);
    const auto tops = top.accessor<int64_t, 1>();
    const auto lefts = left.accessor<int64_t, 1>();
    std::vector<int64_t> outShape = x.sizes().vec();
    outShape[outShape.size() - 2] = size[0];
    outShape[outShape.size() - 1] = size[1];
    at::Tensor out = at::empty(outShape, x.options());
    for (int64_t i = 0; i < x.size(0); ++i) {
      out[i].copy_(padded[i].narrow(-2, tops[i], size[0]).narrow(-1, lefts[i], size[1]));
    }
    return out;
  };
}

// Class indices to float32 one-hot rows (for bce_with_logits or mse on labels).
Apply oneHot(ResolvedOptions& options) {
  const int64_t classes = options.integer("numClasses");
  const std::string owner = options.owner();
  return [=](const at::Tensor& x, at::Generator&) {
    if (x.is_floating_point() || x.is_complex() || x.scalar_type() == at::kBool) {
      throw InvalidArgument(owner + ": needs integer class indices, got " + shapeAndDtypeText(x));
    }
    const at::Tensor labels = x.to(at::kLong);
    const int64_t low = labels.min().item<int64_t>();
    const int64_t high = labels.max().item<int64_t>();
    if (low < 0 || high >= classes) {
      throw InvalidArgument(owner + ": label " + std::to_string(low < 0 ? low : high) + " is outside [0, " +
                            std::to_string(classes) + ") for numClasses " + std::to_string(classes));
    }
    return at::one_hot(labels, classes).to(at::kFloat);
  };
}

using Builder = Apply (*)(ResolvedOptions&);

const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> table = {
      {"normalize", normalize},   {"cast", cast},     {"randomHorizontalFlip", randomHorizontalFlip},
      {"randomCrop", randomCrop}, {"oneHot", oneHot},
  };
  return table;
}

}  // namespace

BatchTransform makeBatchTransform(size_t index, const std::string& name, const OptionMap& options) {
  const std::string owner = "transforms[" + std::to_string(index) + "] (" + name + ")";
  const auto it = builders().find(name);
  if (it == builders().end()) throw InvalidState("firebrand bug: " + owner + " reached C++ unresolved");
  ResolvedOptions resolved(owner, options);
  BatchTransform transform;
  transform.owner = owner;
  transform.field = resolved.text("field");
  transform.apply = it->second(resolved);
  resolved.finish();
  return transform;
}

void applyTransforms(const BatchTransforms& transforms, Batch& batch, at::Generator& generator) {
  for (const auto& transform : transforms) {
    const auto it = batch.fields.find(transform.field);
    if (it == batch.fields.end()) {
      throw InvalidArgument(transform.owner + ": the batch has no field '" + transform.field + "' (it has " +
                            fieldNames(batch.fields) + ")");
    }
    it->second = transform.apply(it->second, generator);
  }
}

}  // namespace firebrand
