// torchvision.transforms.v2.functional's geometry kernels on [C, H, W] tensors.
#pragma once
#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace firebrand {

enum class Interpolation { Nearest, Bilinear, Bicubic };

// Python's round(): halves to even.
int64_t roundHalfEven(double value);

// "nearest", "bilinear", "bicubic" (InterpolationMode's values).
Interpolation interpolationMode(const std::string& name);

// v2's _compute_resized_output_size: one size matches the shorter edge (the longer
// one at most maxSize), two are [height, width].
std::array<int64_t, 2> resizedSize(int64_t height, int64_t width, const std::vector<int64_t>& size,
                                   std::optional<int64_t> maxSize);

// F.resize_image. uint8 goes through libtorch's uint8 kernels where it has them (as torchvision
// does on AVX2 CPUs), else float, rounded and clamped back.
at::Tensor resizeImage(const at::Tensor& image, std::array<int64_t, 2> size, Interpolation interpolation,
                       bool antialias);

// F.crop_image: a window that may reach past the image, zero-padded there.
at::Tensor cropImage(const at::Tensor& image, int64_t top, int64_t left, int64_t height, int64_t width);

// F.center_crop_image: Python's round-half-to-even anchor, zero padding for a crop larger than the image.
at::Tensor centerCropImage(const at::Tensor& image, std::array<int64_t, 2> size);

}  // namespace firebrand
