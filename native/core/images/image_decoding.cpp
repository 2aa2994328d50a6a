#include "core/images/image_decoding.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include "core/errors.h"
#include "core/images/decoded_pixels.h"
#include "core/images/exif_orientation.h"
#include "core/io/input_file.h"

namespace firebrand {
namespace {

using Decoder = bool (*)(const uint8_t*, size_t, ImageReadMode, int64_t, DecodedPixels&, char*);

// The format by its first bytes, never by the file's extension.
Decoder decoderFor(const uint8_t* data, size_t size) {
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return decodeJpeg;
  if (size >= 8 && std::memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0) return decodePng;
  if (size >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WEBP", 4) == 0) return decodeWebp;
  return nullptr;
}

int channelsOf(ImageReadMode mode) {
  switch (mode) {
    case ImageReadMode::Gray:
      return 1;
    case ImageReadMode::GrayAlpha:
      return 2;
    case ImageReadMode::Rgb:
      return 3;
    case ImageReadMode::RgbAlpha:
      return 4;
    default:
      return 0;
  }
}

const std::map<std::string, ImageReadMode>& readModes() {
  static const std::map<std::string, ImageReadMode> modes = {{"UNCHANGED", ImageReadMode::Unchanged},
                                                             {"GRAY", ImageReadMode::Gray},
                                                             {"GRAY_ALPHA", ImageReadMode::GrayAlpha},
                                                             {"RGB", ImageReadMode::Rgb},
                                                             {"RGB_ALPHA", ImageReadMode::RgbAlpha}};
  return modes;
}

}  // namespace

ImageReadMode imageReadMode(const std::string& name) {
  const auto it = readModes().find(name);
  if (it == readModes().end()) {
    throw InvalidArgument("image mode '" + name + "': expected UNCHANGED, GRAY, GRAY_ALPHA, RGB or RGB_ALPHA");
  }
  return it->second;
}

std::string imageReadModeName(ImageReadMode mode) {
  for (const auto& [name, value] : readModes()) {
    if (value == mode) return name;
  }
  return "UNCHANGED";
}

bool withinPixelLimit(int64_t width, int64_t height, int64_t maxPixels, char* why) {
  if (maxPixels <= 0 || width * height <= maxPixels) return true;
  std::snprintf(why, kReasonSize,
                "it is %lldx%lld, %lld pixels, over maxPixels (%lld); a file this large is refused unless "
                "maxPixels allows it",
                static_cast<long long>(width), static_cast<long long>(height), static_cast<long long>(width * height),
                static_cast<long long>(maxPixels));
  return false;
}

at::Tensor decodeImage(const uint8_t* data, size_t size, ImageReadMode mode, const std::string& source,
                       int64_t maxPixels) {
  const Decoder decode = decoderFor(data, size);
  if (decode == nullptr) {
    throw FileError(source + ": not a JPEG, PNG or WebP image (" + std::to_string(size) +
                    " bytes; its first bytes match none of them)");
  }
  DecodedPixels pixels;
  char why[kReasonSize] = {0};
  if (!decode(data, size, mode, maxPixels, pixels, why)) throw FileError(source + ": cannot decode the image: " + why);
  at::Tensor rows = at::from_blob(
      pixels.rows, {pixels.height, pixels.width, pixels.channels}, [](void* memory) { std::free(memory); },
      at::TensorOptions().dtype(at::kByte));
  at::Tensor image = rows.permute({2, 0, 1});
  const int wanted = channelsOf(mode);
  if (wanted == pixels.channels + 1) {  // a mode with alpha, from a format without it
    image = at::cat({image, at::full({1, pixels.height, pixels.width}, 255, image.options())});
  }
  return applyExifOrientation(image, pixels.orientation).contiguous();
}

at::Tensor readImage(const std::string& path, ImageReadMode mode, int64_t maxPixels) {
  const uint64_t size = checkInputFile(path, "image file");
  std::ifstream file(path, std::ios::binary);
  std::vector<uint8_t> bytes(size);
  if (!file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
    throw FileError(path + ": cannot read its " + std::to_string(size) + " bytes");
  }
  return decodeImage(bytes.data(), bytes.size(), mode, path, maxPixels);
}

}  // namespace firebrand
