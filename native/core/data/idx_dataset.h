// A labelled dataset from a pair of IDX files (images and labels), prepared
// the way torchvision's ToTensor + Normalize would.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/data/tensor_dataset.h"
#include "core/options/option_value.h"

namespace firebrand {

struct IdxDatasetOptions {
  // uint8 inputs become float32 in [0, 1].
  bool scaleBytes = true;
  // Applied after scaling: (x - mean) / std.
  std::optional<double> mean;
  std::optional<double> std;
  // Shape of one sample, e.g. {1, 28, 28} to add a channel axis; empty keeps the file's.
  std::vector<int64_t> sampleShape;
};

// Reads { scaleBytes, mean, std, sampleShape }, rejecting unknown fields.
IdxDatasetOptions idxDatasetOptions(const OptionMap& options);

TensorDataset loadIdxDataset(const std::string& inputsPath, const std::string& targetsPath,
                             const IdxDatasetOptions& options);

}  // namespace firebrand
