#include "core/model/sequential_model.h"

#include "core/errors.h"
#include "core/model/submodule_modes.h"
#include "core/model/torchscript_export.h"

namespace firebrand {

SequentialModel::SequentialModel(const ModelSpec& spec)
    : spec_(spec), module_(std::make_shared<torch::nn::Module>("Sequential")) {
  if (spec.empty()) throw InvalidArgument("model: a sequential model needs at least one layer");
  layers_.reserve(spec.size());
  for (size_t index = 0; index < spec.size(); ++index) {
    const std::string owner = "layers[" + std::to_string(index) + "] (" + spec[index].type + ")";
    BuiltLayer built;
    try {
      built = buildLayer(spec[index], owner);
    } catch (const c10::Error&) {
      rethrowWithContext(owner);  // allocation failures while creating the weights
    }
    module_->register_module(std::to_string(index), built.module.ptr());
    layers_.push_back({owner, std::move(built)});
  }
}

at::Tensor SequentialModel::forward(const at::Tensor& input) {
  at::Tensor x = input;
  for (auto& layer : layers_) x = runLayer(layer.built, x, layer.owner);
  return x;
}

torch::OrderedDict<std::string, at::Tensor> SequentialModel::namedParameters() const {
  return module_->named_parameters();
}

void SequentialModel::saveTorchScript(const std::string& path) const { exportSequential(*this, path); }

void SequentialModel::setModelTraining(bool training) { module_->train(training); }

std::vector<std::string> SequentialModel::modulePaths() const { return submodulePaths(*module_); }

void SequentialModel::setModuleTraining(const std::string& path, bool training) { setSubmoduleTraining(*module_, path, training); }

std::vector<std::pair<std::string, BuiltLayer*>> SequentialModel::builtLayers() {
  std::vector<std::pair<std::string, BuiltLayer*>> layers;
  for (size_t i = 0; i < layers_.size(); ++i) layers.emplace_back(std::to_string(i), &layers_[i].built);
  return layers;
}

}  // namespace firebrand
