// Image datasets and decoding for JavaScript: imageDataset, withImageTransforms,
// skippedImages and decodeImage (decoded and transformed on libuv's pool).
#pragma once
#include <napi.h>

namespace firebrand::binding {

void exportImages(Napi::Env env, Napi::Object exports);

}  // namespace firebrand::binding
