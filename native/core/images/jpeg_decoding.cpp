// JPEG through libjpeg(-turbo): torchvision's decode_jpeg settings (the
// library's default IDCT and upsampling), with corrupt-data warnings, such as
// a file that ends early, taken as errors.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/images/decoded_pixels.h"
#include "core/images/exif_orientation.h"
#include "core/images/jpeg_errors.h"

namespace firebrand {
namespace {

// A warning (level -1) means corrupt data that libjpeg would paper over with gray.
void onMessage(j_common_ptr info, int level) {
  if (level >= 0) return;
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  if (errors->manager.num_warnings++ == 0) (*info->err->format_message)(info, errors->message);
}

int orientationOf(j_decompress_ptr info) {
  for (jpeg_saved_marker_ptr marker = info->marker_list; marker != nullptr; marker = marker->next) {
    if (marker->marker == JPEG_APP0 + 1 && marker->data_length > 6 && std::memcmp(marker->data, "Exif\0\0", 6) == 0) {
      return exifOrientation(marker->data + 6, marker->data_length - 6);
    }
  }
  return 1;
}

}  // namespace

bool decodeJpeg(const uint8_t* data, size_t size, ImageReadMode mode, int64_t maxPixels, DecodedPixels& out,
                char* why) {
  jpeg_decompress_struct info;
  JpegErrors errors;
  info.err = jpegErrorManager(errors);
  errors.manager.emit_message = onMessage;
  uint8_t* volatile rows = nullptr;
  if (setjmp(errors.jump) != 0) {
    std::free(rows);
    jpeg_destroy_decompress(&info);
    std::snprintf(why, kReasonSize, "%s", errors.message);
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, data, static_cast<unsigned long>(size));
  jpeg_save_markers(&info, JPEG_APP0 + 1, 0xffff);
  jpeg_read_header(&info, TRUE);
  if (!withinPixelLimit(info.image_width, info.image_height, maxPixels, why)) {
    jpeg_destroy_decompress(&info);
    return false;
  }
  // Saved markers live in the image's memory pool, which jpeg_finish_decompress frees.
  const int orientation = orientationOf(&info);
  if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&info);
    std::snprintf(why, kReasonSize, "a CMYK JPEG; save it as RGB");
    return false;
  }
  const bool grayFile = info.jpeg_color_space == JCS_GRAYSCALE;
  const bool gray =
      mode == ImageReadMode::Gray || mode == ImageReadMode::GrayAlpha || (mode == ImageReadMode::Unchanged && grayFile);
  info.out_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&info);
  const size_t stride = static_cast<size_t>(info.output_width) * info.output_components;
  rows = static_cast<uint8_t*>(std::malloc(stride * info.output_height));
  if (rows == nullptr) {
    jpeg_destroy_decompress(&info);
    std::snprintf(why, kReasonSize, "out of memory for %ux%u pixels", info.output_width, info.output_height);
    return false;
  }
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = rows + stride * info.output_scanline;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  if (errors.manager.num_warnings > 0) {
    std::free(rows);
    jpeg_destroy_decompress(&info);
    std::snprintf(why, kReasonSize, "corrupt or truncated: %s", errors.message);
    return false;
  }
  out.rows = rows;
  out.height = static_cast<int>(info.output_height);
  out.width = static_cast<int>(info.output_width);
  out.channels = info.output_components;
  out.orientation = orientation;
  jpeg_destroy_decompress(&info);
  return true;
}

}  // namespace firebrand
