// A model as a caller describes it: a traced module's description, a
// TorchScript file, or TorchScript source with named parameters.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/model/script_model.h"

namespace firebrand {

// Exactly one of: a traced TypeScript module's description (JSON), a TorchScript
// file, TorchScript source (+ parameters).
struct ModelSource {
  std::string graphDescription;
  std::string torchScriptFile;
  std::string torchScriptSource;
  std::vector<NamedTensor> parameters;
};

std::shared_ptr<Model> buildModel(const ModelSource& source);
// As buildModel, leaving the default CPU generator where it was: describing a
// model (its parameter names and shapes) before training must not shift the
// random numbers a seeded run draws.
std::shared_ptr<Model> buildModelLeavingRng(const ModelSource& source);

}  // namespace firebrand
