// Encodes uint8 [C, H, W] images as PNG (libpng) or JPEG (libjpeg-turbo), as
// torchvision.io.encode_png and encode_jpeg do: 1 (gray), 2 (gray + alpha, PNG
// only), 3 (RGB) or 4 (RGBA, PNG only) channels.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace firebrand {

// compressionLevel 0..9 (zlib's; torchvision's default 6).
std::vector<uint8_t> encodePng(const at::Tensor& image, int compressionLevel);
// quality 1..100 (torchvision's default 75).
std::vector<uint8_t> encodeJpeg(const at::Tensor& image, int quality);

}  // namespace firebrand
