// torchvision.transforms.v2 on one image [C, H, W] (uint8 as decoded, or
// float after toDtype): each row below is a transform with v2's name,
// defaults and arithmetic, op for op, so that results match torchvision's on
// the same image. Random ones draw from the generator the caller passes, in
// the order v2's make_params draws from torch's global one.
#pragma once
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/onnx/onnx_builder.h"
#include "core/options/option_value.h"

namespace firebrand {

// The shape [C, H, W] a transform makes of an image's shape, -1 where it is not known before decoding.
using ShapeRule = std::function<std::vector<int64_t>(const std::vector<int64_t>&)>;

struct ImageTransform {
  std::string owner;  // "transforms[2] (randomResizedCrop)", for errors
  bool random = false;
  std::function<at::Tensor(const at::Tensor&, at::Generator&)> apply;
  ShapeRule shape;
  // The transform on a batch [N, C, H, W] as ONNX nodes, for an export that takes raw images; empty
  // where ONNX cannot give the same values (random ones, resizes, crops, colour conversions).
  std::function<std::string(OnnxBuilder&, const std::string& images)> onnx;
};

using ImageTransforms = std::vector<ImageTransform>;

// Every transform's name, and whether it draws random numbers (it then has no place in served transforms).
std::vector<std::pair<std::string, bool>> imageTransformRows();

// `index` places the transform in its list, for error messages.
ImageTransform makeImageTransform(size_t index, const std::string& name, const OptionMap& options);

// The shape images of `shape` (-1: unknown) have after `transforms`, without decoding any.
std::vector<int64_t> transformedShape(const ImageTransforms& transforms, std::vector<int64_t> shape);

// `image` through `transforms` in order; an error names the transform and the image's shape.
at::Tensor applyImageTransforms(const ImageTransforms& transforms, const at::Tensor& image, at::Generator& generator);

}  // namespace firebrand
