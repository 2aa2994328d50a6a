#include "core/images/image_geometry.h"

#include <ATen/ATen.h>

#include <cmath>
#include <map>
#include <mutex>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

at::Tensor interpolate(const at::Tensor& batch, std::array<int64_t, 2> size, Interpolation interpolation,
                       bool antialias) {
  const std::vector<int64_t> outputSize{size[0], size[1]};
  switch (interpolation) {
    case Interpolation::Nearest:
      return at::upsample_nearest2d(batch, outputSize, c10::nullopt, c10::nullopt);
    case Interpolation::Bilinear:
      return antialias ? at::_upsample_bilinear2d_aa(batch, outputSize, false, c10::nullopt, c10::nullopt)
                       : at::upsample_bilinear2d(batch, outputSize, false, c10::nullopt, c10::nullopt);
    case Interpolation::Bicubic:
      return antialias ? at::_upsample_bicubic2d_aa(batch, outputSize, false, c10::nullopt, c10::nullopt)
                       : at::upsample_bicubic2d(batch, outputSize, false, c10::nullopt, c10::nullopt);
  }
  return batch;
}

// Whether this libtorch interpolates uint8 directly in this mode (libtorch 2.1 and later do for
// bilinear and bicubic): asked once, of the kernel itself.
bool interpolatesBytes(Interpolation interpolation, bool antialias) {
  static std::mutex mutex;
  static std::map<std::pair<Interpolation, bool>, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(interpolation, antialias);
  const auto it = known.find(key);
  if (it != known.end()) return it->second;
  bool supported = true;
  try {
    interpolate(at::zeros({1, 1, 4, 4}, at::kByte), {2, 2}, interpolation, antialias);
  } catch (const std::exception&) {
    supported = false;
  }
  known.emplace(key, supported);
  return supported;
}

}  // namespace

int64_t roundHalfEven(double value) { return static_cast<int64_t>(std::nearbyint(value)); }

Interpolation interpolationMode(const std::string& name) {
  if (name == "nearest") return Interpolation::Nearest;
  if (name == "bilinear") return Interpolation::Bilinear;
  if (name == "bicubic") return Interpolation::Bicubic;
  throw InvalidArgument("interpolation '" + name + "': expected nearest, bilinear or bicubic");
}

std::array<int64_t, 2> resizedSize(int64_t height, int64_t width, const std::vector<int64_t>& size,
                                   std::optional<int64_t> maxSize) {
  if (size.size() == 2) return {size[0], size[1]};
  const bool portrait = width <= height;
  const int64_t shortEdge = portrait ? width : height;
  const int64_t longEdge = portrait ? height : width;
  int64_t newShort = size.at(0);
  int64_t newLong = static_cast<int64_t>(static_cast<double>(newShort) * longEdge / shortEdge);
  if (maxSize && newLong > *maxSize) {
    newShort = static_cast<int64_t>(static_cast<double>(*maxSize) * newShort / newLong);
    newLong = *maxSize;
  }
  return portrait ? std::array<int64_t, 2>{newLong, newShort} : std::array<int64_t, 2>{newShort, newLong};
}

at::Tensor resizeImage(const at::Tensor& image, std::array<int64_t, 2> size, Interpolation interpolation,
                       bool antialias) {
  if (interpolation == Interpolation::Nearest) antialias = false;
  if (image.size(-2) == size[0] && image.size(-1) == size[1]) return image;
  const bool bytes = image.scalar_type() == at::kByte;
  const at::Tensor batch = image.unsqueeze(0);
  bool cast = bytes ? interpolation != Interpolation::Nearest && !interpolatesBytes(interpolation, antialias)
                    : !image.is_floating_point();
  at::Tensor resized;
  if (!cast) {
    try {
      resized = interpolate(batch, size, interpolation, antialias);
    } catch (const c10::Error&) {
      // libtorch 2.x's uint8 antialiased kernel fails an internal assert for some sizes (a 1-pixel side):
      // those go through float, within one step of it.
      cast = true;
    }
  }
  if (cast) resized = interpolate(batch.to(at::kFloat), size, interpolation, antialias);
  if (cast) {
    if (interpolation == Interpolation::Bicubic && bytes) resized.clamp_(0, 255);
    if (!image.is_floating_point()) resized.round_();
    resized = resized.to(image.scalar_type());
  }
  return resized.squeeze(0);
}

at::Tensor cropImage(const at::Tensor& image, int64_t top, int64_t left, int64_t height, int64_t width) {
  const int64_t imageHeight = image.size(-2);
  const int64_t imageWidth = image.size(-1);
  const int64_t right = left + width;
  const int64_t bottom = top + height;
  if (left < 0 || top < 0 || right > imageWidth || bottom > imageHeight) {
    const int64_t fromTop = std::max<int64_t>(top, 0);
    const int64_t fromLeft = std::max<int64_t>(left, 0);
    const at::Tensor inside =
        image.slice(-2, fromTop, std::max(bottom, fromTop)).slice(-1, fromLeft, std::max(right, fromLeft));
    return at::constant_pad_nd(inside,
                               {std::max<int64_t>(std::min<int64_t>(right, 0) - left, 0),
                                std::max<int64_t>(right - std::max(imageWidth, left), 0),
                                std::max<int64_t>(std::min<int64_t>(bottom, 0) - top, 0),
                                std::max<int64_t>(bottom - std::max(imageHeight, top), 0)},
                               0);
  }
  return image.slice(-2, top, bottom).slice(-1, left, right);
}

at::Tensor centerCropImage(const at::Tensor& image, std::array<int64_t, 2> size) {
  at::Tensor source = image;
  const auto [cropHeight, cropWidth] = size;
  if (cropHeight > source.size(-2) || cropWidth > source.size(-1)) {
    const int64_t height = source.size(-2);
    const int64_t width = source.size(-1);
    const int64_t padLeft = cropWidth > width ? (cropWidth - width) / 2 : 0;
    const int64_t padTop = cropHeight > height ? (cropHeight - height) / 2 : 0;
    const int64_t padRight = cropWidth > width ? (cropWidth - width + 1) / 2 : 0;
    const int64_t padBottom = cropHeight > height ? (cropHeight - height + 1) / 2 : 0;
    source = at::constant_pad_nd(source, {padLeft, padRight, padTop, padBottom}, 0);
    if (source.size(-2) == cropHeight && source.size(-1) == cropWidth) return source;
  }
  const int64_t top = roundHalfEven((source.size(-2) - cropHeight) / 2.0);
  const int64_t left = roundHalfEven((source.size(-1) - cropWidth) / 2.0);
  return source.slice(-2, top, top + cropHeight).slice(-1, left, left + cropWidth);
}

}  // namespace firebrand
