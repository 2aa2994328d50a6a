// Image datasets and decoding for JavaScript: imageDataset, withImageTransforms,
// skippedImages and decodeImage (decoded and transformed on libuv's pool).
#pragma once
#include <napi.h>

#include <string>

#include "core/images/image_transforms.h"

namespace firebrand::binding {

void exportImages(Napi::Env env, Napi::Object exports);

// [{ name: 'resize', size: [256] }, ...], as src/images/image-transforms.ts resolved them.
ImageTransforms toImageTransforms(const Napi::Value& value, const std::string& field);

}  // namespace firebrand::binding
