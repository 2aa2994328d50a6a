// torchvision.transforms.v2.functional's color and dtype kernels on [C, H, W]
// tensors, op for op (the same promotions, truncations and clamps).
#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

namespace firebrand {

// F.rgb_to_grayscale (1 or 3 output channels); a 1-channel image is copied or repeated.
at::Tensor grayscaleImage(const at::Tensor& image, int64_t outputChannels);
// F.grayscale_to_rgb: 1 channel to 3; 3 or more stay.
at::Tensor grayscaleToRgbImage(const at::Tensor& image);

at::Tensor adjustBrightness(const at::Tensor& image, double factor);
at::Tensor adjustContrast(const at::Tensor& image, double factor);
at::Tensor adjustSaturation(const at::Tensor& image, double factor);
at::Tensor adjustHue(const at::Tensor& image, double factor);

// F.to_dtype_image: `scale` maps uint8's [0, 255] to floats' [0, 1] and back.
at::Tensor toDtypeImage(const at::Tensor& image, at::ScalarType dtype, bool scale);

// F.normalize_image: (image - mean) / std per channel, on floats.
at::Tensor normalizeImage(const at::Tensor& image, const std::vector<double>& mean, const std::vector<double>& std);

}  // namespace firebrand
