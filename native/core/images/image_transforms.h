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
#include <vector>

#include "core/options/option_value.h"

namespace firebrand {

struct ImageTransform {
  std::string owner;  // "transforms[2] (randomResizedCrop)", for errors
  bool random = false;
  std::function<at::Tensor(const at::Tensor&, at::Generator&)> apply;
};

using ImageTransforms = std::vector<ImageTransform>;

// `index` places the transform in its list, for error messages.
ImageTransform makeImageTransform(size_t index, const std::string& name, const OptionMap& options);

// `image` through `transforms` in order; an error names the transform and the image's shape.
at::Tensor applyImageTransforms(const ImageTransforms& transforms, const at::Tensor& image, at::Generator& generator);

}  // namespace firebrand
