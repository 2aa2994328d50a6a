// WebP through libwebp: RGB, or RGBA when the mode keeps alpha (as
// torchvision's decode_webp, which has no gray modes either).
#include <webp/decode.h>

#include <cstdio>
#include <cstdlib>

#include "core/images/decoded_pixels.h"

namespace firebrand {

bool decodeWebp(const uint8_t* data, size_t size, ImageReadMode mode, int64_t maxPixels, DecodedPixels& out,
                char* why) {
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(data, size, &features) != VP8_STATUS_OK) {
    std::snprintf(why, kReasonSize, "not a readable WebP header");
    return false;
  }
  if (!withinPixelLimit(features.width, features.height, maxPixels, why)) return false;
  if (mode == ImageReadMode::Gray || mode == ImageReadMode::GrayAlpha) {
    std::snprintf(why, kReasonSize, "WebP decodes to RGB or RGB_ALPHA only (as torchvision); convert with grayscale()");
    return false;
  }
  const bool alpha = mode == ImageReadMode::RgbAlpha || (mode == ImageReadMode::Unchanged && features.has_alpha);
  const int channels = alpha ? 4 : 3;
  const size_t stride = static_cast<size_t>(features.width) * channels;
  auto* rows = static_cast<uint8_t*>(std::malloc(stride * features.height));
  if (rows == nullptr) {
    std::snprintf(why, kReasonSize, "out of memory for %dx%d pixels", features.width, features.height);
    return false;
  }
  const size_t bytes = stride * features.height;
  const int strideBytes = static_cast<int>(stride);
  const bool decoded = alpha ? WebPDecodeRGBAInto(data, size, rows, bytes, strideBytes) != nullptr
                             : WebPDecodeRGBInto(data, size, rows, bytes, strideBytes) != nullptr;
  if (!decoded) {
    std::free(rows);
    std::snprintf(why, kReasonSize, "corrupt or truncated WebP data");
    return false;
  }
  out = DecodedPixels{rows, features.height, features.width, channels, 1};
  return true;
}

}  // namespace firebrand
