#include "core/model/graph_model.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>

#include "core/errors.h"
#include "core/model/eval_mode_scope.h"
#include "core/model/name_patterns.h"
#include "core/model/submodule_modes.h"
#include "core/model/torchscript_export.h"
#include "core/shape_text.h"

namespace firebrand {

GraphModel::GraphModel(const std::string& description) : GraphModel(parseGraphModel(description)) {}

namespace {

// `named` with each tensor once, under its first name; `aliases` gets the other names.
torch::OrderedDict<std::string, at::Tensor> distinct(
    const torch::OrderedDict<std::string, at::Tensor>& named,
    std::vector<std::pair<std::string, std::string>>* aliases = nullptr) {
  torch::OrderedDict<std::string, at::Tensor> first;
  std::map<const c10::TensorImpl*, std::string> names;
  for (const auto& item : named) {
    const auto [it, isNew] = names.emplace(item.value().unsafeGetTensorImpl(), item.key());
    if (isNew || !item.value().defined())
      first.insert(item.key(), item.value());
    else if (aliases)
      aliases->emplace_back(item.key(), it->second);
  }
  return first;
}

// torch::nn::Module keeps its parameters protected; a pointer to that member, named through a class derived
// from Module, reads any module's without named_parameters() building every name.
struct ModuleParameters : torch::nn::Module {
  static constexpr auto held = &ModuleParameters::parameters_;
};

bool visitModuleParameters(const torch::nn::Module& module, const std::function<bool(const at::Tensor&)>& visit) {
  for (const auto& item : module.*ModuleParameters::held) {
    if (item.value().defined() && !visit(item.value())) return false;
  }
  for (const auto& child : module.children()) {
    if (!visitModuleParameters(*child, visit)) return false;
  }
  return true;
}

std::vector<std::string> nonPersistentBufferNames(const ModuleSpec& module, const std::string& path) {
  std::vector<std::string> names;
  for (const auto& buffer : module.buffers) {
    if (!buffer.persistent) names.push_back(path.empty() ? buffer.name : path + "." + buffer.name);
  }
  for (const auto& [name, child] : module.children) {
    for (auto& nested : nonPersistentBufferNames(child, path.empty() ? name : path + "." + name))
      names.push_back(std::move(nested));
  }
  return names;
}

}  // namespace

GraphModel::GraphModel(GraphModelSpec spec)
    : tree_(buildModuleTree(spec.modules, spec.construction, spec.valuesLoadedLater)),
      program_(std::make_unique<GraphProgram>(std::move(spec.graph), tree_)),
      nonPersistentBuffers_(nonPersistentBufferNames(spec.modules, "")) {
  distinct(tree_.root->named_parameters(), &tiedNames_);
  distinct(tree_.root->named_buffers(), &tiedNames_);
}

std::vector<std::string> GraphModel::registrationOrder() const {
  std::vector<std::string> names = tree_.root->named_parameters().keys();
  for (const auto& name : tree_.root->named_buffers().keys()) names.push_back(name);
  return names;
}

torch::OrderedDict<std::string, at::Tensor> GraphModel::namedParameters() const {
  return distinct(tree_.root->named_parameters());
}

void GraphModel::visitParameters(const std::function<bool(const at::Tensor&)>& visit) const {
  visitModuleParameters(*tree_.root, visit);
}

torch::OrderedDict<std::string, at::Tensor> GraphModel::namedBuffers() const {
  return distinct(tree_.root->named_buffers());
}

std::vector<at::Tensor> GraphModel::singleInput(const at::Tensor& input) const {
  if (program_->inputs().size() != 1) {
    std::string names;
    for (const auto& name : program_->inputs()) names += (names.empty() ? "'" : ", '") + name + "'";
    throw InvalidArgument("model: forward takes " + std::to_string(program_->inputs().size()) + " inputs (" + names +
                          "), so it needs a batch of those fields; give predict an object of them by name");
  }
  return {input};
}

at::Tensor GraphModel::forward(const at::Tensor& input) { return forwardAll(input)[selectedOutput_]; }

std::vector<at::Tensor> GraphModel::forwardAll(const at::Tensor& input) {
  return program_->run(singleInput(input), tree_.root->is_training(), device_);
}

at::Tensor GraphModel::forwardTokens(const at::Tensor& ids, const at::Tensor& mask, DecodeCache* cache) {
  const auto& names = program_->inputs();
  std::vector<at::Tensor> inputs;
  if (names.size() == 1) {
    refusePadding(mask);
    inputs = {ids};
  } else if (names.size() == 2 && std::count(names.begin(), names.end(), "attention_mask") == 1) {
    inputs = names[0] == "attention_mask" ? std::vector<at::Tensor>{mask, ids} : std::vector<at::Tensor>{ids, mask};
  } else {
    std::string list;
    for (const auto& name : names) list += (list.empty() ? "'" : ", '") + name + "'";
    throw InvalidArgument("generate: forward takes " + list +
                          "; a language model takes the token ids alone, or them and 'attention_mask' by name");
  }
  if (cache) cache->fresh = ids.size(1);
  at::Tensor output = program_->run(inputs, tree_.root->is_training(), device_, cache)[selectedOutput_];
  if (cache) cache->past += ids.size(1);
  return output;
}

at::Tensor GraphModel::forward(const Batch& batch) { return forwardAll(batch)[selectedOutput_]; }

std::vector<at::Tensor> GraphModel::forwardAll(const Batch& batch) {
  std::vector<at::Tensor> inputs;
  inputs.reserve(program_->inputs().size());
  for (const auto& name : program_->inputs()) inputs.push_back(batch.field(name));
  return program_->run(inputs, tree_.root->is_training(), device_);
}

std::string GraphModel::describeInputs(const Batch& batch) const {
  if (program_->inputs() == std::vector<std::string>{kInputField}) return Model::describeInputs(batch);
  std::string text;
  for (const auto& name : program_->inputs()) {
    const at::Tensor& field = batch.field(name);
    text += (text.empty() ? "" : ", ") + name + " " + shapeText(field.sizes().slice(1));
  }
  return "samples of " + text;
}

std::vector<std::optional<std::vector<int64_t>>> GraphModel::nodeShapes(const at::Tensor& input) {
  at::NoGradGuard noGrad;
  EvalModeScope evalMode(*this);
  std::vector<std::optional<std::vector<int64_t>>> shapes;
  for (const auto& value : program_->values({input.to(device_)}, false, device_)) {
    shapes.push_back(value.isTensor() ? std::optional<std::vector<int64_t>>(value.toTensor().sizes().vec())
                                      : std::nullopt);
  }
  return shapes;
}

void GraphModel::moveTo(const c10::Device& device) {
  tree_.root->to(device);
  device_ = device;
}

void GraphModel::saveTorchScript(const std::string& path) const { exportGraph(*this, path); }

OnnxGraph GraphModel::onnxGraph(const TensorDict& example, const OnnxExportOptions& options) {
  // Layers run in their own mode (batch norm's statistics): the whole tree is put in eval mode.
  EvalModeScope evalMode(*this);
  const auto& names = program_->inputs();
  std::vector<at::Tensor> inputs;
  if (names.size() == 1 && example.size() == 1) {
    inputs.push_back(example.begin()->second.to(device_));
  } else {
    for (const auto& name : names) {
      const auto it = example.find(name);
      if (it == example.end())
        throw InvalidArgument("exportOnnx: example has no '" + name + "'; forward takes " +
                              std::to_string(names.size()) + " inputs by name");
      inputs.push_back(it->second.to(device_));
    }
  }
  return graphOnnx(*program_, tree_, inputs, options);
}

void GraphModel::setModelTraining(bool training) { tree_.root->train(training); }

std::vector<std::string> GraphModel::modulePaths() const { return submodulePaths(*tree_.root); }

void GraphModel::setModulesTraining(const std::vector<std::string>& paths, bool training) {
  submoduleModes_.set(*tree_.root, paths, training);
}

std::vector<std::pair<std::string, BuiltLayer*>> GraphModel::builtLayers() {
  std::vector<std::pair<std::string, BuiltLayer*>> layers;
  for (const auto& path : submodulePaths(*tree_.root)) {
    const auto it = tree_.layers.find(path);
    if (it != tree_.layers.end()) layers.emplace_back(path, &it->second.built);
  }
  return layers;
}

std::vector<std::string> GraphModel::checkpointActivations(const std::vector<std::string>& patterns) {
  const std::vector<std::string> matched =
      namesMatching(patterns, submodulePaths(*tree_.root), "config.activationCheckpointing");
  // The outermost: a module's segment holds its children's ops.
  std::vector<std::string> outermost;
  for (const auto& path : matched) {
    const bool inner = std::any_of(matched.begin(), matched.end(), [&](const std::string& outer) {
      return path.compare(0, outer.size() + 1, outer + ".") == 0;
    });
    if (!inner) outermost.push_back(path);
  }
  const std::vector<std::string> used = program_->checkpoint(outermost, tree_);
  for (const auto& path : outermost) {
    if (std::find(used.begin(), used.end(), path) == used.end()) {
      throw InvalidArgument("config.activationCheckpointing: module '" + path +
                            "' runs no op in forward, so there is nothing to recompute");
    }
  }
  return used;
}

}  // namespace firebrand
