#include "core/images/image_color.h"

#include <ATen/ATen.h>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

double maxValue(at::ScalarType dtype) { return at::isFloatingType(dtype) ? 1.0 : 255.0; }

void requireChannels(const at::Tensor& image, const char* kernel) {
  const int64_t channels = image.size(-3);
  if (channels != 1 && channels != 3) {
    throw ShapeMismatch(std::string(kernel) + ": needs 1 or 3 channels, got an image " + shapeText(image));
  }
}

at::Tensor luminance(const at::Tensor& image) {
  const auto channels = image.unbind(-3);
  return channels[0].mul(0.2989).add_(channels[1], 0.587).add_(channels[2], 0.114).unsqueeze(-3);
}

at::Tensor blend(const at::Tensor& image, const at::Tensor& other, double ratio) {
  at::Tensor output = image.mul(ratio).add_(other, 1.0 - ratio).clamp_(0, maxValue(image.scalar_type()));
  return image.is_floating_point() ? output : output.to(image.scalar_type());
}

at::Tensor rgbToHsv(const at::Tensor& image) {
  const auto channels = image.unbind(-3);
  const at::Tensor& r = channels[0];
  const at::Tensor& g = channels[1];
  auto [minc, maxc] = at::aminmax(image, -3);
  const at::Tensor eqc = maxc == minc;
  const at::Tensor range = maxc - minc;
  const at::Tensor ones = at::ones_like(maxc);
  const at::Tensor s = range / at::where(eqc, ones, maxc);
  const at::Tensor divisor = at::where(eqc, ones, range).unsqueeze_(-3);
  const auto scaled = ((maxc.unsqueeze(-3) - image) / divisor).unbind(-3);
  at::Tensor rc = scaled[0];
  at::Tensor gc = scaled[1];
  at::Tensor bc = scaled[2];
  at::Tensor maxNotR = maxc != r;
  const at::Tensor maxIsG = maxc == g;
  const at::Tensor hg = rc.add(2.0).sub_(bc).mul_(maxIsG & maxNotR);
  const at::Tensor hr = bc.sub_(gc).mul_(maxNotR.logical_not());
  const at::Tensor hb = gc.add_(4.0).sub_(rc).mul_(maxNotR.logical_and_(maxIsG.logical_not()));
  at::Tensor h = hr.add_(hg).add_(hb);
  h = h.mul_(1.0 / 6.0).add_(1.0).fmod_(1.0);
  return at::stack({h, s, maxc}, -3);
}

at::Tensor hsvToRgb(const at::Tensor& image) {
  const auto channels = image.unbind(-3);
  const at::Tensor& h = channels[0];
  const at::Tensor& s = channels[1];
  const at::Tensor& v = channels[2];
  at::Tensor h6 = h.mul(6);
  at::Tensor i = at::floor(h6);
  const at::Tensor f = h6.sub_(i);
  i = i.to(at::kInt);
  at::Tensor sxf = s * f;
  at::Tensor oneMinusS = 1.0 - s;
  const at::Tensor q = (1.0 - sxf).mul_(v).clamp_(0.0, 1.0);
  const at::Tensor t = sxf.add_(oneMinusS).mul_(v).clamp_(0.0, 1.0);
  const at::Tensor p = oneMinusS.mul_(v).clamp_(0.0, 1.0);
  i.remainder_(6);
  const at::Tensor vpqt = at::stack({v, p, q, t}, -3);
  const at::Tensor select = at::tensor({0, 2, 1, 1, 3, 0, 3, 0, 0, 2, 1, 1, 1, 1, 3, 0, 0, 2}, at::kLong).view({3, 6});
  return vpqt.gather(-3, select.index_select(1, i.flatten().to(at::kLong)).view({3, i.size(0), i.size(1)}));
}

}  // namespace

at::Tensor grayscaleImage(const at::Tensor& image, int64_t outputChannels) {
  if (image.size(-3) == 1) return outputChannels == 1 ? image.clone() : image.repeat({3, 1, 1});
  requireChannels(image, "grayscale");
  const at::Tensor gray = luminance(image).to(image.scalar_type());
  return outputChannels == 3 ? gray.expand(image.sizes()) : gray;
}

at::Tensor grayscaleToRgbImage(const at::Tensor& image) {
  return image.size(-3) >= 3 ? image : grayscaleImage(image, 3);
}

at::Tensor flattenAlphaImage(const at::Tensor& image, const std::vector<double>& background) {
  const int64_t channels = image.size(-3);
  if (channels != 2 && channels != 4) return image;
  const bool integral = !image.is_floating_point();
  const double scale = integral ? 1.0 : 1.0 / 255;
  const at::Tensor values = image.to(at::kFloat);
  const at::Tensor alpha = values.narrow(-3, channels - 1, 1) / (integral ? 255.0 : 1.0);
  const at::Tensor color = values.narrow(-3, 0, channels - 1);
  std::vector<double> fill(static_cast<size_t>(channels - 1), background.front() * scale);
  if (background.size() == fill.size()) {
    for (size_t i = 0; i < fill.size(); ++i) fill[i] = background[i] * scale;
  }
  const at::Tensor behind = at::tensor(fill, at::kDouble).to(at::kFloat).view({-1, 1, 1});
  at::Tensor output = color * alpha + behind * (1 - alpha);
  return integral ? output.round_().clamp_(0, 255).to(image.scalar_type()) : output.to(image.scalar_type());
}

at::Tensor adjustBrightness(const at::Tensor& image, double factor) {
  requireChannels(image, "adjust_brightness");
  at::Tensor output = image.mul(factor).clamp_(0, maxValue(image.scalar_type()));
  return image.is_floating_point() ? output : output.to(image.scalar_type());
}

at::Tensor adjustContrast(const at::Tensor& image, double factor) {
  requireChannels(image, "adjust_contrast");
  at::Tensor gray;
  if (image.size(-3) == 3) {
    gray = luminance(image);
    if (!image.is_floating_point()) gray.floor_();
  } else {
    gray = image.is_floating_point() ? image : image.to(at::kFloat);
  }
  return blend(image, at::mean(gray, {-3, -2, -1}, true), factor);
}

at::Tensor adjustSaturation(const at::Tensor& image, double factor) {
  requireChannels(image, "adjust_saturation");
  if (image.size(-3) == 1) return image;
  at::Tensor gray = luminance(image);
  if (!image.is_floating_point()) gray.floor_();
  return blend(image, gray, factor);
}

at::Tensor adjustHue(const at::Tensor& image, double factor) {
  requireChannels(image, "adjust_hue");
  if (image.size(-3) == 1 || image.numel() == 0) return image;
  const at::Tensor hsv = rgbToHsv(toDtypeImage(image, at::kFloat, true));
  auto channels = hsv.unbind(-3);
  channels[0].add_(factor).remainder_(1.0);
  return toDtypeImage(hsvToRgb(at::stack({channels[0], channels[1], channels[2]}, -3)), image.scalar_type(), true);
}

at::Tensor toDtypeImage(const at::Tensor& image, at::ScalarType dtype, bool scale) {
  if (image.scalar_type() == dtype) return image;
  if (!scale) return image.to(dtype);
  const bool floatInput = image.is_floating_point();
  const bool floatOutput = at::isFloatingType(dtype);
  if (floatInput && floatOutput) return image.to(dtype);
  if (floatInput) return image.mul(maxValue(dtype) + 1.0 - 1e-3).to(dtype);
  if (floatOutput) return image.to(dtype).mul_(1.0 / maxValue(image.scalar_type()));
  if (image.scalar_type() == at::kByte && dtype != at::kByte) {
    throw InvalidArgument("toDtype: scaling uint8 to " + std::string(c10::toString(dtype)) +
                          " is not supported; scale to a floating dtype");
  }
  return image.to(dtype);
}

std::string normalizeValuesAdvice(size_t given, int64_t channels, int64_t lastSize) {
  if (static_cast<int64_t>(given) == lastSize && lastSize != channels) {
    return "its last dimension holds " + std::to_string(lastSize) +
           ": this looks like channels last ([H, W, C], as a canvas or sharp gives); images are [C, H, W]: transpose "
           "it (permute [2, 0, 1], or [0, 3, 1, 2] for a batch)";
  }
  return channels == 1 ? "give 1 value" : "give 1 or " + std::to_string(channels);
}

at::Tensor normalizeImage(const at::Tensor& image, const std::vector<double>& mean, const std::vector<double>& std) {
  if (!image.is_floating_point()) {
    throw InvalidArgument("normalize: needs a floating-point image, got " + shapeAndDtypeText(image) +
                          "; put toDtype({ dtype: 'float32', scale: true }) before it");
  }
  const int64_t channels = image.size(-3);
  for (const auto* values : {&mean, &std}) {
    if (values->size() != 1 && static_cast<int64_t>(values->size()) != channels) {
      throw ShapeMismatch("normalize: " + std::to_string(values->size()) + " values for an image " + shapeText(image) +
                          " of " + std::to_string(channels) + " channels; " +
                          normalizeValuesAdvice(values->size(), channels, image.size(-1)));
    }
  }
  const auto options = at::TensorOptions().dtype(image.scalar_type());
  const at::Tensor meanTensor = at::tensor(mean, at::kDouble).to(options).view({-1, 1, 1});
  const at::Tensor stdTensor = at::tensor(std, at::kDouble).to(options).view({-1, 1, 1});
  return image.sub(meanTensor).div_(stdTensor);
}

}  // namespace firebrand
