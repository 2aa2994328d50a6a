// torchvision.transforms.v2.functional's color and dtype kernels on [C, H, W]
// tensors, op for op (the same promotions, truncations and clamps).
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace firebrand {

// F.rgb_to_grayscale (1 or 3 output channels); a 1-channel image is copied or repeated.
at::Tensor grayscaleImage(const at::Tensor& image, int64_t outputChannels);
// F.grayscale_to_rgb: 1 channel to 3; 3 or more stay.
at::Tensor grayscaleToRgbImage(const at::Tensor& image);
// An image with alpha (2 or 4 channels) composited onto `background` (1 or 3 values on uint8's 0-255 scale)
// without its alpha: c * a + b * (1 - a), rounded to the nearest for uint8, as a canvas draws it. Others pass.
at::Tensor flattenAlphaImage(const at::Tensor& image, const std::vector<double>& background);

at::Tensor adjustBrightness(const at::Tensor& image, double factor);
at::Tensor adjustContrast(const at::Tensor& image, double factor);
at::Tensor adjustSaturation(const at::Tensor& image, double factor);
at::Tensor adjustHue(const at::Tensor& image, double factor);

// F.to_dtype_image: `scale` maps uint8's [0, 255] to floats' [0, 1] and back.
at::Tensor toDtypeImage(const at::Tensor& image, at::ScalarType dtype, bool scale);

// F.normalize_image: (image - mean) / std per channel, on floats.
// What to give `normalize` for an image of `channels` channels that got `given` values: 1 or that many, or a
// transpose when the last dimension (`lastSize`) is the one that matches (channels last, as a canvas gives).
std::string normalizeValuesAdvice(size_t given, int64_t channels, int64_t lastSize);
at::Tensor normalizeImage(const at::Tensor& image, const std::vector<double>& mean, const std::vector<double>& std);

}  // namespace firebrand
