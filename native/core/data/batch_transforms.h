// Transforms applied in C++ to whole batches as the loader cuts them, each on
// one field: normalize, cast, randomHorizontalFlip, randomCrop, oneHot. The
// random ones draw from a generator the loader seeds from (seed, epoch, batch
// index), so a seed replays the same batches whatever the loader's threads do.
#pragma once
#include <ATen/core/Generator.h>

#include <functional>
#include <string>
#include <vector>

#include "core/data/batch.h"
#include "core/options/option_value.h"

namespace firebrand {

struct BatchTransform {
  std::string owner;  // "transforms[1] (randomCrop)", for errors
  std::string field;
  std::function<at::Tensor(const at::Tensor&, at::Generator&)> apply;
};

using BatchTransforms = std::vector<BatchTransform>;

// `index` places the transform in its list, for error messages.
BatchTransform makeBatchTransform(size_t index, const std::string& name, const OptionMap& options);

void applyTransforms(const BatchTransforms& transforms, Batch& batch, at::Generator& generator);

}  // namespace firebrand
