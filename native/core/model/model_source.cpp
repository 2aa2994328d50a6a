#include "core/model/model_source.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/model/graph_model.h"

namespace firebrand {

std::shared_ptr<Model> buildModel(const ModelSource& source) {
  if (!source.torchScriptFile.empty()) return ScriptModel::load(source.torchScriptFile);
  if (!source.torchScriptSource.empty()) return ScriptModel::define(source.torchScriptSource, source.parameters);
  return std::make_shared<GraphModel>(source.graphDescription);
}

std::shared_ptr<Model> buildModelLeavingRng(const ModelSource& source) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  at::Tensor state;
  {
    std::lock_guard<std::mutex> lock(generator.mutex());
    state = generator.get_state();
  }
  std::shared_ptr<Model> model;
  try {
    model = buildModel(source);
  } catch (...) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
    throw;
  }
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
  return model;
}

}  // namespace firebrand
