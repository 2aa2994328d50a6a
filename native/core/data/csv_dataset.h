// A labelled dataset from a numeric CSV file: one column holds the targets,
// every other column is an input feature (float32).
#pragma once
#include <string>

#include "core/data/tensor_dataset.h"
#include "core/options/option_value.h"

namespace firebrand {

struct CsvOptions {
  // The target column by header name, or by 0-based index when `labelIndex` >= 0.
  std::string labelName;
  int64_t labelIndex = -1;
  char delimiter = ',';
  bool header = true;
  // Integer class labels (int64) or float32 regression targets.
  bool classLabels = true;
};

// Reads { labelColumn (name or index; default the last column), delimiter, header, targets: 'class' | 'value' }.
CsvOptions csvOptions(const OptionMap& options);

TensorDataset loadCsvDataset(const std::string& path, const CsvOptions& options);

}  // namespace firebrand
