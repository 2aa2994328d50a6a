// The EXIF orientation tag (0x0112) of a JPEG APP1 or PNG eXIf block, and
// the flips and transposes that put such an image upright, as torchvision's
// decoders apply them (torchvision/csrc/io/image/cpu/exif.h). One tag of a
// TIFF directory is read, bounds-checked; a malformed block means "upright".
#pragma once
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>

namespace firebrand {

// 1..8, or 1 when the block holds no valid orientation. `tiff` starts at the
// TIFF header ("II*\0" or "MM\0*"), after JPEG's "Exif\0\0".
int exifOrientation(const uint8_t* tiff, size_t size);

// `image` [C, H, W] turned upright for `orientation`.
at::Tensor applyExifOrientation(const at::Tensor& image, int orientation);

}  // namespace firebrand
