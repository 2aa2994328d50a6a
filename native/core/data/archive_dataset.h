// Datasets from files of named arrays (.npz, .safetensors): each field is
// one array of the file, chosen by name.
#pragma once
#include <map>
#include <string>

#include "core/data/tensor_dataset.h"

namespace firebrand {

// field name -> array name in the file; empty: every array, as a field of its own name.
using FieldSelection = std::map<std::string, std::string>;

TensorDataset loadNpzDataset(const std::string& path, const FieldSelection& fields);
TensorDataset loadSafetensorsDataset(const std::string& path, const FieldSelection& fields);

}  // namespace firebrand
