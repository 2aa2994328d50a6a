#include "core/model/graph_model.h"

#include "core/errors.h"

namespace firebrand {

GraphModel::GraphModel(const std::string& description) : GraphModel(parseGraphModel(description)) {}

GraphModel::GraphModel(GraphModelSpec spec)
    : tree_(buildModuleTree(spec.modules, spec.construction)),
      program_(std::make_unique<GraphProgram>(std::move(spec.graph), tree_)) {
  if (program_->inputs().size() != 1) {
    throw InvalidArgument("model: forward takes " + std::to_string(program_->inputs().size()) +
                          " inputs; a model with several inputs is not supported yet (one input, the 'input' field)");
  }
}

at::Tensor GraphModel::forward(const at::Tensor& input) { return program_->run({input}, tree_.root->is_training(), device_); }

void GraphModel::moveTo(const c10::Device& device) {
  tree_.root->to(device);
  device_ = device;
}

void GraphModel::saveTorchScript(const std::string&) const {
  throw InvalidState("exportTorchScript: a model written as TypeScript modules cannot be exported as TorchScript yet");
}

}  // namespace firebrand
