#include "core/model/graph_model.h"

#include <ATen/core/grad_mode.h>

#include "core/errors.h"
#include "core/model/eval_mode_scope.h"
#include "core/model/torchscript_export.h"

namespace firebrand {

GraphModel::GraphModel(const std::string& description) : GraphModel(parseGraphModel(description)) {}

namespace {

void collectLayers(const ModuleSpec& spec, const std::string& path, std::map<std::string, LayerSpec>& layers) {
  if (spec.layer) layers[path] = *spec.layer;
  for (const auto& [name, child] : spec.children) collectLayers(child, path.empty() ? name : path + "." + name, layers);
}

std::map<std::string, LayerSpec> layersOf(const ModuleSpec& spec) {
  std::map<std::string, LayerSpec> layers;
  collectLayers(spec, "", layers);
  return layers;
}

}  // namespace

GraphModel::GraphModel(GraphModelSpec spec)
    : layerSpecs_(layersOf(spec.modules)),
      tree_(buildModuleTree(spec.modules, spec.construction)),
      program_(std::make_unique<GraphProgram>(std::move(spec.graph), tree_)) {
  if (program_->inputs().size() != 1) {
    throw InvalidArgument("model: forward takes " + std::to_string(program_->inputs().size()) +
                          " inputs; a model with several inputs is not supported yet (one input, the 'input' field)");
  }
}

at::Tensor GraphModel::forward(const at::Tensor& input) { return program_->run({input}, tree_.root->is_training(), device_); }

std::vector<std::optional<std::vector<int64_t>>> GraphModel::nodeShapes(const at::Tensor& input) {
  at::NoGradGuard noGrad;
  EvalModeScope evalMode(*this);
  std::vector<std::optional<std::vector<int64_t>>> shapes;
  for (const auto& value : program_->values({input.to(device_)}, false, device_)) {
    shapes.push_back(value.isTensor() ? std::optional<std::vector<int64_t>>(value.toTensor().sizes().vec()) : std::nullopt);
  }
  return shapes;
}

void GraphModel::moveTo(const c10::Device& device) {
  tree_.root->to(device);
  device_ = device;
}

void GraphModel::saveTorchScript(const std::string& path) const { exportGraph(*this, path); }

}  // namespace firebrand
