// Encoded images made into samples as an image dataset's files are: decoded,
// then transformed, each alone (decodeTransformed), or stacked into one batch
// (predict's images: one native call instead of one per image).
#pragma once
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/images/image_decoding.h"
#include "core/images/image_transforms.h"

namespace firebrand {

// One encoded image decoded and transformed; `source` names it in errors.
at::Tensor decodeTransformed(const uint8_t* data, size_t size, ImageReadMode mode, const ImageTransforms& transforms,
                             at::Generator& generator, const std::string& source, int64_t maxPixels);

// The images, each decoded and transformed (named `field`[i] in errors), stacked as [N, ...]. Images that
// end at another size than the first are an error naming them: the transforms must end at one size.
at::Tensor decodeImageBatch(const std::vector<std::vector<uint8_t>>& images, ImageReadMode mode,
                            const ImageTransforms& transforms, uint64_t seed, const std::string& field,
                            int64_t maxPixels);

}  // namespace firebrand
