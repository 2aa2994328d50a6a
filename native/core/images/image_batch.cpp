#include "core/images/image_batch.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {

at::Tensor decodeTransformed(const uint8_t* data, size_t size, ImageReadMode mode, const ImageTransforms& transforms,
                             at::Generator& generator, const std::string& source, int64_t maxPixels) {
  const at::Tensor image = decodeImage(data, size, mode, source, maxPixels);
  try {
    return applyImageTransforms(transforms, image, generator).contiguous();
  } catch (const Error& error) {
    throw Error(error.code(), source + ": " + error.what());
  }
}

at::Tensor decodeImageBatch(const std::vector<std::vector<uint8_t>>& images, ImageReadMode mode,
                            const ImageTransforms& transforms, uint64_t seed, const std::string& field,
                            int64_t maxPixels) {
  const auto sourceOf = [&field](size_t i) { return field + "[" + std::to_string(i) + "]"; };
  std::vector<at::Tensor> samples;
  samples.reserve(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    at::Generator generator = at::detail::createCPUGenerator(seed);
    samples.push_back(
        decodeTransformed(images[i].data(), images[i].size(), mode, transforms, generator, sourceOf(i), maxPixels));
    if (samples[i].sizes() != samples[0].sizes()) {
      throw ShapeMismatch(sourceOf(i) + " is " + shapeText(samples[i].sizes()) + " after the transforms but " +
                          sourceOf(0) + " is " + shapeText(samples[0].sizes()) +
                          "; the saved transforms must end at one size (resize and centerCrop)");
    }
  }
  return at::stack(samples);
}

}  // namespace firebrand
