#include "core/images/exif_orientation.h"

#include <ATen/ATen.h>

namespace firebrand {
namespace {

constexpr uint16_t kOrientationTag = 0x0112;
constexpr uint16_t kShortType = 3;

uint32_t readUnsigned(const uint8_t* at, int bytes, bool littleEndian) {
  uint32_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    const uint32_t byte = at[littleEndian ? i : bytes - 1 - i];
    value |= byte << (8 * i);
  }
  return value;
}

}  // namespace

int exifOrientation(const uint8_t* tiff, size_t size) {
  if (size < 8) return 1;
  const bool littleEndian = tiff[0] == 'I' && tiff[1] == 'I';
  if (!littleEndian && !(tiff[0] == 'M' && tiff[1] == 'M')) return 1;
  if (readUnsigned(tiff + 2, 2, littleEndian) != 42) return 1;
  const uint64_t directory = readUnsigned(tiff + 4, 4, littleEndian);
  if (directory + 2 > size) return 1;
  const uint32_t entries = readUnsigned(tiff + directory, 2, littleEndian);
  for (uint32_t i = 0; i < entries; ++i) {
    const uint64_t entry = directory + 2 + 12ULL * i;
    if (entry + 12 > size) return 1;
    if (readUnsigned(tiff + entry, 2, littleEndian) != kOrientationTag) continue;
    if (readUnsigned(tiff + entry + 2, 2, littleEndian) != kShortType) return 1;
    const uint32_t value = readUnsigned(tiff + entry + 8, 2, littleEndian);
    return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
  }
  return 1;
}

at::Tensor applyExifOrientation(const at::Tensor& image, int orientation) {
  switch (orientation) {
    case 2:
      return image.flip({-1});
    case 3:
      return image.flip({-2, -1});
    case 4:
      return image.flip({-2});
    case 5:
      return image.transpose(-1, -2);
    case 6:
      return image.transpose(-1, -2).flip({-1});
    case 7:
      return image.transpose(-1, -2).flip({-2, -1});
    case 8:
      return image.transpose(-1, -2).flip({-2});
    default:
      return image;
  }
}

}  // namespace firebrand
