// What each format's decoder hands back: interleaved 8-bit rows in memory it
// allocated with malloc, and the file's EXIF orientation. The decoders are
// plain C-library code (libjpeg and libpng report errors by longjmp, which
// must not cross a C++ object's lifetime), so they hold nothing with a destructor.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/images/image_decoding.h"

namespace firebrand {

struct DecodedPixels {
  uint8_t* rows = nullptr;  // height * width * channels bytes, freed with free()
  int height = 0;
  int width = 0;
  int channels = 0;
  int orientation = 1;
};

// Each returns false and writes a reason into `why` (at most kReasonSize bytes) when the bytes do not decode,
// or when the header says more than `maxPixels` pixels (0: any), before any pixel is allocated.
constexpr size_t kReasonSize = 256;
bool decodeJpeg(const uint8_t* data, size_t size, ImageReadMode mode, int64_t maxPixels, DecodedPixels& out, char* why);
bool decodePng(const uint8_t* data, size_t size, ImageReadMode mode, int64_t maxPixels, DecodedPixels& out, char* why);
bool decodeWebp(const uint8_t* data, size_t size, ImageReadMode mode, int64_t maxPixels, DecodedPixels& out, char* why);

// Whether a width x height image fits `maxPixels` (0: any); if not, says so in `why`.
bool withinPixelLimit(int64_t width, int64_t height, int64_t maxPixels, char* why);

}  // namespace firebrand
