// Decodes JPEG, PNG and WebP files to uint8 [C, H, W] tensors, as
// torchvision.io.decode_image does (its read modes, EXIF orientation applied),
// with libjpeg-turbo, libpng and libwebp. A file that cannot be decoded, or
// that ends early, is a FileError naming it: no half-gray image goes on.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace firebrand {

// torchvision.io.ImageReadMode: the channels wanted, whatever the file holds.
enum class ImageReadMode { Unchanged, Gray, GrayAlpha, Rgb, RgbAlpha };

// "UNCHANGED", "GRAY", "GRAY_ALPHA", "RGB", "RGB_ALPHA" (torchvision's names).
ImageReadMode imageReadMode(const std::string& name);
std::string imageReadModeName(ImageReadMode mode);

// PIL's Image.MAX_IMAGE_PIXELS: a file that says more pixels is refused before they are allocated (a
// 420 KB PNG can say 12000x12000, 432 MB of pixels).
constexpr int64_t kDefaultMaxPixels = 89478485;

// `source` names the bytes in errors (a path). 16-bit PNG samples are scaled to
// 8 bits with rounding (libpng's png_set_scale_16: v * 255 / 65535). More than
// `maxPixels` pixels (0: any) is a FileError saying the size.
at::Tensor decodeImage(const uint8_t* data, size_t size, ImageReadMode mode, const std::string& source,
                       int64_t maxPixels = kDefaultMaxPixels);

// The file at `path`, read whole and decoded.
at::Tensor readImage(const std::string& path, ImageReadMode mode, int64_t maxPixels = kDefaultMaxPixels);

}  // namespace firebrand
