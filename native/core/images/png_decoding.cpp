// PNG through libpng, with torchvision's decode_png transforms: low bit depths
// and palettes expanded (a palette always, where torchvision's UNCHANGED keeps
// its indices), channels converted by libpng with torchvision's luma weights,
// 16-bit samples scaled to 8 bits with rounding (torchvision keeps 16).
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/images/decoded_pixels.h"
#include "core/images/exif_orientation.h"

namespace firebrand {
namespace {

struct PngSource {
  const uint8_t* data;
  size_t size;
  size_t offset;
};

void readFromMemory(png_structp png, png_bytep into, png_size_t count) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (count > source->size - source->offset) png_error(png, "the file ends early (truncated)");
  std::memcpy(into, source->data + source->offset, count);
  source->offset += count;
}

void onError(png_structp png, png_const_charp message) {
  std::snprintf(static_cast<char*>(png_get_error_ptr(png)), kReasonSize, "%s", message);
  png_longjmp(png, 1);
}

void onWarning(png_structp, png_const_charp) {}

int orientationOf(png_structp png, png_infop info) {
#ifdef PNG_eXIf_SUPPORTED
  png_uint_32 size = 0;
  png_bytep exif = nullptr;
  if (png_get_valid(png, info, PNG_INFO_eXIf) && png_get_eXIf_1(png, info, &size, &exif) != 0 && exif != nullptr) {
    return exifOrientation(exif, size);
  }
#endif
  return 1;
}

}  // namespace

bool decodePng(const uint8_t* data, size_t size, ImageReadMode mode, int64_t maxPixels, DecodedPixels& out, char* why) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, why, onError, onWarning);
  png_infop info = png == nullptr ? nullptr : png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(why, kReasonSize, "libpng could not start");
    return false;
  }
  PngSource source{data, size, 0};
  uint8_t* volatile rows = nullptr;
  if (setjmp(png_jmpbuf(png)) != 0) {
    std::free(rows);
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, &source, readFromMemory);
  png_read_info(png, info);
  if (!withinPixelLimit(png_get_image_width(png, info), png_get_image_height(png, info), maxPixels, why)) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  const int colorType = png_get_color_type(png, info);
  const int bitDepth = png_get_bit_depth(png, info);
  const bool palette = colorType == PNG_COLOR_TYPE_PALETTE;
  const bool color = (colorType & PNG_COLOR_MASK_COLOR) != 0;
  // A palette's transparency (tRNS) becomes alpha as it expands; other images' tRNS is ignored, as torchvision does.
  const bool alpha = (colorType & PNG_COLOR_MASK_ALPHA) != 0 || (palette && png_get_valid(png, info, PNG_INFO_tRNS));
  if (colorType == PNG_COLOR_TYPE_GRAY && bitDepth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (palette) png_set_palette_to_rgb(png);
  if (bitDepth == 16) png_set_scale_16(png);
  const bool wantsGray = mode == ImageReadMode::Gray || mode == ImageReadMode::GrayAlpha;
  const bool wantsAlpha = mode == ImageReadMode::GrayAlpha || mode == ImageReadMode::RgbAlpha;
  if (mode != ImageReadMode::Unchanged) {
    // torchvision's luma weights (F.rgb_to_grayscale's), not libpng's defaults.
    if (wantsGray && color) png_set_rgb_to_gray(png, 1, 0.2989, 0.587);
    if (!wantsGray && !color) png_set_gray_to_rgb(png);
    if (wantsAlpha && !alpha) png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
    if (!wantsAlpha && alpha) png_set_strip_alpha(png);
  }
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);

  const png_uint_32 width = png_get_image_width(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  const size_t stride = png_get_rowbytes(png, info);
  rows = static_cast<uint8_t*>(std::malloc(stride * height));
  if (rows == nullptr) png_error(png, "out of memory for the pixels");
  for (int pass = 0; pass < passes; ++pass) {
    for (png_uint_32 y = 0; y < height; ++y) png_read_row(png, rows + stride * y, nullptr);
  }
  png_read_end(png, info);
  out.rows = rows;
  out.height = static_cast<int>(height);
  out.width = static_cast<int>(width);
  out.channels = png_get_channels(png, info);
  out.orientation = orientationOf(png, info);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

}  // namespace firebrand
