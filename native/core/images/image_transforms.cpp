#include "core/images/image_transforms.h"

#include <ATen/ATen.h>

#include <cmath>
#include <map>

#include "core/errors.h"
#include "core/images/image_color.h"
#include "core/images/image_geometry.h"
#include "core/onnx/onnx_builder.h"
#include "core/options/resolved_options.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

using Apply = std::function<at::Tensor(const at::Tensor&, at::Generator&)>;

// A row builds its transform, and sets `shape` when it changes an image's shape.
struct Row {
  bool random;
  // Sets the transform's shape rule and ONNX form where they differ from the defaults.
  Apply (*build)(ResolvedOptions&, ImageTransform& transform);
};

std::vector<int64_t> withSize(const std::vector<int64_t>& shape, std::array<int64_t, 2> size) {
  return {shape.at(0), size[0], size[1]};
}

// float(torch.empty(1).uniform_(low, high)): a float32 draw, as a double.
double uniform(double low, double high, at::Generator& generator) {
  return at::empty({1}, at::kFloat).uniform_(low, high, generator).item<double>();
}

int64_t randint(int64_t high, at::Generator& generator) {
  return at::randint(0, high, {1}, generator, at::kLong).item<int64_t>();
}

std::array<int64_t, 2> squareOr(const std::vector<int64_t>& size) {
  return size.size() == 1 ? std::array<int64_t, 2>{size[0], size[0]} : std::array<int64_t, 2>{size[0], size[1]};
}

Apply resize(ResolvedOptions& options, ImageTransform& transform) {
  const std::vector<int64_t> size = options.integers("size");
  const Interpolation interpolation = interpolationMode(options.text("interpolation"));
  const bool antialias = options.flag("antialias");
  const std::optional<int64_t> maxSize = options.optionalInteger("maxSize");
  transform.shape = [=](const std::vector<int64_t>& input) {
    if (size.size() == 2) return withSize(input, {size[0], size[1]});
    if (input[1] < 0 || input[2] < 0) return std::vector<int64_t>{input[0], -1, -1};
    return withSize(input, resizedSize(input[1], input[2], size, maxSize));
  };
  return [=](const at::Tensor& image, at::Generator&) {
    return resizeImage(image, resizedSize(image.size(-2), image.size(-1), size, maxSize), interpolation, antialias);
  };
}

Apply centerCrop(ResolvedOptions& options, ImageTransform& transform) {
  const std::array<int64_t, 2> size = squareOr(options.integers("size"));
  transform.shape = [=](const std::vector<int64_t>& input) { return withSize(input, size); };
  return [=](const at::Tensor& image, at::Generator&) { return centerCropImage(image, size); };
}

// v2.RandomResizedCrop.make_params, then F.resized_crop.
Apply randomResizedCrop(ResolvedOptions& options, ImageTransform& transform) {
  const std::array<int64_t, 2> size = squareOr(options.integers("size"));
  transform.shape = [=](const std::vector<int64_t>& input) { return withSize(input, size); };
  const std::vector<double> scale = options.numbers("scale");
  const std::vector<double> ratio = options.numbers("ratio");
  const Interpolation interpolation = interpolationMode(options.text("interpolation"));
  const bool antialias = options.flag("antialias");
  const at::Tensor logRatio = at::log(at::tensor({ratio[0], ratio[1]}, at::kDouble).to(at::kFloat));
  const double logLow = logRatio[0].item<double>();
  const double logHigh = logRatio[1].item<double>();
  return [=](const at::Tensor& image, at::Generator& generator) {
    const int64_t height = image.size(-2);
    const int64_t width = image.size(-1);
    const double area = static_cast<double>(height * width);
    int64_t top = 0, left = 0, h = 0, w = 0;
    bool found = false;
    for (int attempt = 0; attempt < 10 && !found; ++attempt) {
      const double targetArea = area * uniform(scale[0], scale[1], generator);
      const double aspect = at::exp(at::empty({1}, at::kFloat).uniform_(logLow, logHigh, generator)).item<double>();
      w = roundHalfEven(std::sqrt(targetArea * aspect));
      h = roundHalfEven(std::sqrt(targetArea / aspect));
      if (0 < w && w <= width && 0 < h && h <= height) {
        top = randint(height - h + 1, generator);
        left = randint(width - w + 1, generator);
        found = true;
      }
    }
    if (!found) {  // the central crop torchvision falls back to
      const double inRatio = static_cast<double>(width) / static_cast<double>(height);
      if (inRatio < ratio[0]) {
        w = width;
        h = roundHalfEven(w / ratio[0]);
      } else if (inRatio > ratio[1]) {
        h = height;
        w = roundHalfEven(h * ratio[1]);
      } else {
        w = width;
        h = height;
      }
      top = (height - h) / 2;
      left = (width - w) / 2;
    }
    return resizeImage(cropImage(image, top, left, h, w), size, interpolation, antialias);
  };
}

Apply randomHorizontalFlip(ResolvedOptions& options, ImageTransform&) {
  const double p = options.number("p");
  return [=](const at::Tensor& image, at::Generator& generator) {
    if (at::rand({1}, generator).ge(p).item<bool>()) return image;
    return image.flip({-1});
  };
}

// ColorJitter's ranges, given as v2's _check_input leaves them; nullopt where the factor stays put.
std::optional<std::array<double, 2>> jitterRange(ResolvedOptions& options, const std::string& name) {
  const std::optional<std::vector<double>> range = options.optionalNumbers(name);
  if (!range) return std::nullopt;
  return std::array<double, 2>{(*range)[0], (*range)[1]};
}

Apply colorJitter(ResolvedOptions& options, ImageTransform&) {
  const auto brightness = jitterRange(options, "brightness");
  const auto contrast = jitterRange(options, "contrast");
  const auto saturation = jitterRange(options, "saturation");
  const auto hue = jitterRange(options, "hue");
  return [=](const at::Tensor& image, at::Generator& generator) {
    const at::Tensor order = at::randperm(4, generator, at::kLong);
    const auto draw = [&](const std::optional<std::array<double, 2>>& range) -> std::optional<double> {
      if (!range) return std::nullopt;
      return uniform((*range)[0], (*range)[1], generator);
    };
    const std::optional<double> factors[4] = {draw(brightness), draw(contrast), draw(saturation), draw(hue)};
    at::Tensor output = image;
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t kernel = order[i].item<int64_t>();
      if (!factors[kernel]) continue;
      const double factor = *factors[kernel];
      output = kernel == 0   ? adjustBrightness(output, factor)
               : kernel == 1 ? adjustContrast(output, factor)
               : kernel == 2 ? adjustSaturation(output, factor)
                             : adjustHue(output, factor);
    }
    return output;
  };
}

Apply grayscale(ResolvedOptions& options, ImageTransform& transform) {
  const int64_t channels = options.integer("numOutputChannels");
  transform.shape = [=](const std::vector<int64_t>& input) {
    return std::vector<int64_t>{channels, input[1], input[2]};
  };
  return [=](const at::Tensor& image, at::Generator&) { return grayscaleImage(image, channels); };
}

Apply rgb(ResolvedOptions&, ImageTransform& transform) {
  transform.shape = [](const std::vector<int64_t>& input) {
    return std::vector<int64_t>{input[0] < 0 ? -1 : std::max<int64_t>(input[0], 3), input[1], input[2]};
  };
  return [](const at::Tensor& image, at::Generator&) { return grayscaleToRgbImage(image); };
}

Apply flattenAlpha(ResolvedOptions& options, ImageTransform& transform) {
  const std::vector<double> background = options.numbers("background");
  transform.shape = [](const std::vector<int64_t>& input) {
    return std::vector<int64_t>{input[0] == 2 || input[0] == 4 ? input[0] - 1 : input[0], input[1], input[2]};
  };
  return [=](const at::Tensor& image, at::Generator&) { return flattenAlphaImage(image, background); };
}

Apply toDtype(ResolvedOptions& options, ImageTransform& transform) {
  static const std::map<std::string, at::ScalarType> dtypes = {{"float32", at::kFloat},
                                                               {"float64", at::kDouble},
                                                               {"float16", at::kHalf},
                                                               {"bfloat16", at::kBFloat16},
                                                               {"uint8", at::kByte}};
  const at::ScalarType dtype = dtypes.at(options.text("dtype"));
  const bool scale = options.flag("scale");
  // uint8 to a float dtype, as toDtypeImage does it; other conversions are not folded into an export.
  if (at::isFloatingType(dtype)) {
    transform.onnx = [=](OnnxBuilder& b, const std::string& images) {
      const std::string cast = b.cast(images, dtype);
      return scale ? b.op("Mul", {cast, b.scalar(1.0 / 255, dtype)}) : cast;
    };
  }
  return [=](const at::Tensor& image, at::Generator&) { return toDtypeImage(image, dtype, scale); };
}

// torchvision.transforms.ToTensor's arithmetic (v1): float32 of uint8 / 255, as Dataset.fromIdx scales;
// v2's toDtype multiplies by 1/255 instead, which can differ in the last bit.
Apply toTensor(ResolvedOptions&, ImageTransform& transform) {
  transform.onnx = [](OnnxBuilder& b, const std::string& images) {
    return b.op("Div", {b.cast(images, at::kFloat), b.scalar(255, at::kFloat)});
  };
  return [](const at::Tensor& image, at::Generator&) {
    if (image.scalar_type() != at::kByte) {
      throw InvalidArgument("toTensor: needs a uint8 image, got " + shapeAndDtypeText(image));
    }
    return image.to(at::kFloat).div_(255.0);
  };
}

Apply normalize(ResolvedOptions& options, ImageTransform& transform) {
  const std::vector<double> mean = options.numbers("mean");
  const std::vector<double> std = options.numbers("std");
  // On float32 images (what toTensor or toDtype made), per channel as [C, 1, 1].
  transform.onnx = [=](OnnxBuilder& b, const std::string& images) {
    const auto perChannel = [&](const std::vector<double>& values) {
      return b.constant(at::tensor(values, at::kDouble).to(at::kFloat).view({-1, 1, 1}));
    };
    return b.op("Div", {b.op("Sub", {images, perChannel(mean)}), perChannel(std)});
  };
  return [=](const at::Tensor& image, at::Generator&) { return normalizeImage(image, mean, std); };
}

const std::map<std::string, Row>& rows() {
  static const std::map<std::string, Row> table = {
      {"resize", {false, resize}},
      {"centerCrop", {false, centerCrop}},
      {"randomResizedCrop", {true, randomResizedCrop}},
      {"randomHorizontalFlip", {true, randomHorizontalFlip}},
      {"colorJitter", {true, colorJitter}},
      {"grayscale", {false, grayscale}},
      {"rgb", {false, rgb}},
      {"flattenAlpha", {false, flattenAlpha}},
      {"toDtype", {false, toDtype}},
      {"toTensor", {false, toTensor}},
      {"normalize", {false, normalize}},
  };
  return table;
}

}  // namespace

std::vector<std::pair<std::string, bool>> imageTransformRows() {
  std::vector<std::pair<std::string, bool>> named;
  for (const auto& [name, row] : rows()) named.emplace_back(name, row.random);
  return named;
}

ImageTransform makeImageTransform(size_t index, const std::string& name, const OptionMap& options) {
  const std::string owner = "transforms[" + std::to_string(index) + "] (" + name + ")";
  const auto it = rows().find(name);
  if (it == rows().end()) throw InvalidState("firebrand bug: image " + owner + " reached C++ unresolved");
  ResolvedOptions resolved(owner, options);
  ImageTransform transform;
  transform.owner = owner;
  transform.random = it->second.random;
  transform.shape = [](const std::vector<int64_t>& input) { return input; };
  transform.apply = it->second.build(resolved, transform);
  resolved.finish();
  return transform;
}

std::vector<int64_t> transformedShape(const ImageTransforms& transforms, std::vector<int64_t> shape) {
  for (const auto& transform : transforms) shape = transform.shape(shape);
  return shape;
}

at::Tensor applyImageTransforms(const ImageTransforms& transforms, const at::Tensor& image, at::Generator& generator) {
  at::Tensor output = image;
  for (const auto& transform : transforms) {
    try {
      output = transform.apply(output, generator);
    } catch (const Error& error) {
      throw Error(error.code(), transform.owner + " on an image " + shapeAndDtypeText(output) + ": " + error.what());
    } catch (const std::exception& error) {
      throw ShapeMismatch(transform.owner + " on an image " + shapeAndDtypeText(output) + ": " + torchReason(error));
    }
  }
  return output;
}

}  // namespace firebrand
