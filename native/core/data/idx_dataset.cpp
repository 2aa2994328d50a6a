#include "core/data/idx_dataset.h"

#include <ATen/ATen.h>

#include <limits>

#include "core/data/idx_reader.h"
#include "core/errors.h"
#include "core/options/resolved_options.h"
#include "core/shape_text.h"

namespace firebrand {
IdxDatasetOptions idxDatasetOptions(const OptionMap& optionMap) {
  ResolvedOptions resolved("Dataset.fromIdx options", optionMap);
  IdxDatasetOptions options;
  options.scaleBytes = resolved.flag("scaleBytes");
  options.mean = resolved.optionalNumber("mean");
  options.std = resolved.optionalNumber("std");
  if (resolved.has("sampleShape")) options.sampleShape = resolved.integers("sampleShape");
  resolved.finish();
  return options;
}

TensorDataset loadIdxDataset(const std::string& inputsPath, const std::string& targetsPath,
                             const IdxDatasetOptions& options) {
  at::Tensor inputs = readIdx(inputsPath);
  at::Tensor targets = readIdx(targetsPath);
  if (inputs.dim() == 1 && targets.dim() >= 2) {
    throw InvalidArgument("Dataset.fromIdx: " + inputsPath + " holds one value per sample " + shapeText(inputs) +
                          " and " + targetsPath + " holds " + shapeText(targets) +
                          ": the files look swapped; give the inputs (images) first and the labels second");
  }

  if (!options.sampleShape.empty()) {
    std::vector<int64_t> shape{inputs.size(0)};
    shape.insert(shape.end(), options.sampleShape.begin(), options.sampleShape.end());
    const int64_t wanted = c10::multiply_integers(options.sampleShape);
    const int64_t has = inputs.size(0) == 0 ? 0 : inputs.numel() / inputs.size(0);
    if (wanted != has) {
      throw ShapeMismatch(inputsPath + ": sampleShape " + shapeText(options.sampleShape) + " holds " +
                          std::to_string(wanted) + " values but each sample of " + shapeText(inputs) + " holds " +
                          std::to_string(has));
    }
    inputs = inputs.reshape(shape);
  }
  if (options.scaleBytes && inputs.scalar_type() == at::kByte) {
    inputs = inputs.to(at::kFloat).div_(255.0);
  }
  if (options.mean || options.std) {
    if (!inputs.is_floating_point()) inputs = inputs.to(at::kFloat);
    inputs = inputs.sub_(options.mean.value_or(0.0)).div_(options.std.value_or(1.0));
  }
  // Labels stay in their file dtype; losses convert them to what they need.
  return TensorDataset(inputs.contiguous(), targets);
}

}  // namespace firebrand
