// A model as a caller describes it: layer specs, a TorchScript file, or
// TorchScript source with named parameters.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/model/layer_spec.h"
#include "core/model/script_model.h"

namespace firebrand {

// Exactly one of: layers, a TorchScript file, TorchScript source (+ parameters).
struct ModelSource {
  ModelSpec layers;
  std::string torchScriptFile;
  std::string torchScriptSource;
  std::vector<NamedTensor> parameters;
};

std::shared_ptr<Model> buildModel(const ModelSource& source);

}  // namespace firebrand
