#include "core/images/image_encoding.h"

#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/errors.h"
#include "core/images/jpeg_errors.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// Interleaved rows [H, W, C] of a uint8 [C, H, W] image with `allowed` channel counts.
at::Tensor interleaved(const at::Tensor& image, const char* format, std::initializer_list<int64_t> allowed) {
  bool fits = image.dim() == 3 && image.scalar_type() == at::kByte;
  if (fits) fits = std::find(allowed.begin(), allowed.end(), image.size(0)) != allowed.end();
  if (!fits || image.size(1) == 0 || image.size(2) == 0) {
    std::string counts;
    for (const int64_t count : allowed) counts += (counts.empty() ? "" : ", ") + std::to_string(count);
    throw ShapeMismatch(std::string("encode ") + format + ": needs a uint8 image [C, H, W] with C in {" + counts +
                        "}, got " + shapeAndDtypeText(image));
  }
  return image.permute({1, 2, 0}).contiguous();
}

void writeToVector(png_structp png, png_bytep data, png_size_t length) {
  auto* bytes = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(png));
  bytes->insert(bytes->end(), data, data + length);
}

void onPngError(png_structp png, png_const_charp message) {
  std::snprintf(static_cast<char*>(png_get_error_ptr(png)), 256, "%s", message);
  png_longjmp(png, 1);
}

// The libpng calls, with no C++ object alive across its longjmp.
bool writePng(const uint8_t* rows, int height, int width, int channels, int level, std::vector<uint8_t>* out,
              char* why) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, why, onPngError, nullptr);
  png_infop info = png == nullptr ? nullptr : png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(why, 256, "libpng could not start");
    return false;
  }
  if (setjmp(png_jmpbuf(png)) != 0) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  static const int colorTypes[] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                   PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(png, out, writeToVector, nullptr);
  png_set_compression_level(png, level);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, colorTypes[channels],
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const size_t stride = static_cast<size_t>(width) * channels;
  for (int y = 0; y < height; ++y) png_write_row(png, const_cast<png_bytep>(rows + stride * y));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

bool writeJpeg(const uint8_t* rows, int height, int width, int channels, int quality, unsigned char** data,
               unsigned long* size, char* why) {
  jpeg_compress_struct info;
  JpegErrors errors;
  info.err = jpegErrorManager(errors);
  if (setjmp(errors.jump) != 0) {
    jpeg_destroy_compress(&info);
    std::snprintf(why, 256, "%s", errors.message);
    return false;
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, data, size);
  info.image_width = static_cast<JDIMENSION>(width);
  info.image_height = static_cast<JDIMENSION>(height);
  info.input_components = channels;
  info.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  jpeg_start_compress(&info, TRUE);
  const size_t stride = static_cast<size_t>(width) * channels;
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(rows + stride * info.next_scanline);
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  return true;
}

}  // namespace

std::vector<uint8_t> encodePng(const at::Tensor& image, int compressionLevel) {
  const at::Tensor rows = interleaved(image, "PNG", {1, 2, 3, 4});
  std::vector<uint8_t> bytes;
  char why[256] = {0};
  if (!writePng(rows.data_ptr<uint8_t>(), static_cast<int>(rows.size(0)), static_cast<int>(rows.size(1)),
                static_cast<int>(rows.size(2)), compressionLevel, &bytes, why)) {
    throw InvalidArgument(std::string("encode PNG: ") + why);
  }
  return bytes;
}

std::vector<uint8_t> encodeJpeg(const at::Tensor& image, int quality) {
  const at::Tensor rows = interleaved(image, "JPEG", {1, 3});
  unsigned char* data = nullptr;
  unsigned long size = 0;
  char why[256] = {0};
  const bool written =
      writeJpeg(rows.data_ptr<uint8_t>(), static_cast<int>(rows.size(0)), static_cast<int>(rows.size(1)),
                static_cast<int>(rows.size(2)), quality, &data, &size, why);
  std::vector<uint8_t> bytes;
  if (written) bytes.assign(data, data + size);
  std::free(data);
  if (!written) throw InvalidArgument(std::string("encode JPEG: ") + why);
  return bytes;
}

}  // namespace firebrand
