#include "core/model/model_source.h"

#include "core/model/sequential_model.h"

namespace firebrand {

std::shared_ptr<Model> buildModel(const ModelSource& source) {
  if (!source.torchScriptFile.empty()) return ScriptModel::load(source.torchScriptFile);
  if (!source.torchScriptSource.empty()) return ScriptModel::define(source.torchScriptSource, source.parameters);
  return std::make_shared<SequentialModel>(source.layers);
}

}  // namespace firebrand
