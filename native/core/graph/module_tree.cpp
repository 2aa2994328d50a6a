#include "core/graph/module_tree.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Functions.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/errors.h"
#include "core/nn/init_schemes.h"
#include "core/nn/initial_values.h"
#include "core/nn/layer_ties.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// Whether `path` is `outer` or inside it ("" holds everything).
bool within(const std::string& path, const std::string& outer) {
  return outer.empty() || path == outer || path.rfind(outer + ".", 0) == 0;
}

// Where a layer's cast can move: the layer built at step `at` takes the dtype of the first later cast
// that covers it right after the last step before that cast that touches it (an init of its tensors, a
// copy from or into it). Between there and the cast nothing reads or writes it, so the values are the
// same, and a model cast to bfloat16 (fromPretrained's dtype) never holds all its layers in float32.
struct EarlyCast {
  size_t after = 0;
  at::ScalarType dtype = at::kFloat;
};

std::optional<EarlyCast> earlyCast(const std::vector<ConstructionStep>& steps, size_t at) {
  const std::string& path = steps[at].layerPath;
  if (path.empty()) return std::nullopt;
  const auto related = [&](const std::string& other) { return within(path, other) || within(other, path); };
  size_t last = at;
  for (size_t next = at + 1; next < steps.size(); ++next) {
    const ConstructionStep& step = steps[next];
    switch (step.kind) {
      case ConstructionStep::Kind::Cast:
        if (within(path, step.castPath)) return EarlyCast{last, *step.castTo};
        if (within(step.castPath, path)) return std::nullopt;
        break;
      case ConstructionStep::Kind::Init:
        if (within(step.initTarget, path)) last = next;
        break;
      case ConstructionStep::Kind::Copy:
        if (related(step.copyFrom) || related(step.copyTo)) last = next;
        break;
      case ConstructionStep::Kind::Layer:
        break;
    }
  }
  return std::nullopt;
}

class TreeBuilder {
 public:
  TreeBuilder(const ModuleSpec& root, const std::vector<std::string>& loadedLater)
      : sequentialRoot_(root.className == "Sequential"), loadedLater_(loadedLater.begin(), loadedLater.end()) {
    index(root, "");
  }

  void construct(const ConstructionStep& step) {
    if (step.kind == ConstructionStep::Kind::Layer) {
      const auto it = specs_.find(step.layerPath);
      if (it == specs_.end() || !it->second->layer)
        throw InvalidState("firebrand bug: no layer at '" + step.layerPath + "'");
      const std::string owner = layerName(step.layerPath) + " (" + it->second->layer->type + ")";
      try {
        // A copy's layer takes its values from the copy step: building it must not move the generator.
        at::Generator generator = at::detail::getDefaultCPUGenerator();
        const at::Tensor drawn = step.copiedLayer ? generator.get_state() : at::Tensor();
        tree_.layers.emplace(step.layerPath,
                             TreeLayer{owner, layerFor(step.layerPath, *it->second->layer, owner), *it->second->layer});
        if (drawn.defined()) generator.set_state(drawn);
      } catch (const c10::Error&) {
        rethrowWithContext(owner);  // allocation failures while creating the weights
      }
      return;
    }
    if (step.kind == ConstructionStep::Kind::Copy) {
      copyModule(step.copyFrom, step.copyTo);
      return;
    }
    if (step.kind == ConstructionStep::Kind::Cast) {
      castModule(step.castPath, *step.castTo);
      return;
    }
    if (loadedLater_.count(step.initTarget) > 0) return;  // the checkpoint's values replace what it would draw
    at::Tensor tensor = stateTensor(step.initTarget);
    applyInit(tensor, step.scheme, step.options, step.initTarget);
  }

  ModuleTree finish(const ModuleSpec& root) {
    // Every tie's tensor is read before any is applied: a tie reads the tensor as construction left it.
    collectTies(root, "");
    tree_.root = assemble(root, "");
    return std::move(tree_);
  }

 private:
  // How errors name a layer: nn.sequential's users know its layers as layers[i].
  std::string layerName(const std::string& path) const {
    if (path.empty()) return "model";
    return sequentialRoot_ && path.find('.') == std::string::npos ? "layers[" + path + "]" : path;
  }

  // The layer at `path`, made without drawing its values (initial_values.h) where the checkpoint loaded next
  // holds every tensor of it; made again, drawing, where it holds some of them only.
  BuiltLayer layerFor(const std::string& path, const LayerSpec& spec, const std::string& owner) {
    const std::string prefix = path.empty() ? "" : path + ".";
    const auto any = loadedLater_.lower_bound(prefix);
    if (any != loadedLater_.end() && any->rfind(prefix, 0) == 0) {
      std::optional<BuiltLayer> undrawn;
      {
        UndrawnValues::Scope scope;
        undrawn = buildLayer(spec, owner);
      }
      const auto& module = *undrawn->module.ptr();
      bool everyOne = true;
      for (const auto& item : module.named_parameters()) everyOne = everyOne && loadedLater_.count(prefix + item.key());
      for (const auto& item : module.named_buffers()) everyOne = everyOne && loadedLater_.count(prefix + item.key());
      if (everyOne) return std::move(*undrawn);
    }
    return buildLayer(spec, owner);
  }

  bool sequentialRoot_;
  std::set<std::string> loadedLater_;
  // Every tensor made so far at or under the module `path` ("" the model), by its name relative to it.
  std::map<std::string, at::Tensor> tensorsUnder(const std::string& path) {
    const std::string prefix = path.empty() ? "" : path + ".";
    std::map<std::string, at::Tensor> found;
    for (const auto& [name, tensor] : tensors_) {
      if (name.rfind(prefix, 0) == 0) found[name.substr(prefix.size())] = tensor;
    }
    for (const auto& [layerPath, layer] : tree_.layers) {
      if (layerPath != path && layerPath.rfind(prefix, 0) != 0) continue;
      const std::string at = layerPath == path ? "" : layerPath.substr(prefix.size()) + ".";
      const auto& module = *layer.built.module.ptr();
      for (const auto& item : module.named_parameters()) found[at + item.key()] = item.value();
      for (const auto& item : module.named_buffers()) found[at + item.key()] = item.value();
    }
    return found;
  }

  void copyModule(const std::string& from, const std::string& to) {
    const auto sources = tensorsUnder(from);
    auto targets = tensorsUnder(to);
    if (sources.size() != targets.size())
      throw InvalidState("firebrand bug: '" + to + "' is no copy of '" + from + "'");
    at::NoGradGuard noGrad;
    for (const auto& [name, source] : sources) {
      const auto target = targets.find(name);
      if (target == targets.end()) throw InvalidState("firebrand bug: the copy '" + to + "' has no '" + name + "'");
      target->second.copy_(source);
    }
  }

 public:
  // module.to(dtype): its floating tensors and its layers' take `dtype` in place, as PyTorch's
  // Module._apply sets param.data, so that ties and layers' members keep pointing at them.
  void castModule(const std::string& path, at::ScalarType dtype) {
    at::NoGradGuard noGrad;
    for (auto& [name, tensor] : tensorsUnder(path)) {
      if (tensor.is_floating_point()) tensor.set_data(tensor.to(dtype));
    }
    if (path.empty()) tree_.inputDtype = dtype;
  }

 private:
  void index(const ModuleSpec& spec, const std::string& path) {
    specs_[path] = &spec;
    for (const auto& parameter : spec.parameters)
      tensors_[join(path, parameter.name)] = makeTensor(parameter, join(path, parameter.name));
    for (const auto& buffer : spec.buffers)
      tensors_[join(path, buffer.name)] = makeTensor(buffer, join(path, buffer.name));
    for (const auto& [name, child] : spec.children) index(child, join(path, name));
  }

  static at::Tensor makeTensor(const StateTensorSpec& spec, const std::string& owner) {
    const auto options = at::TensorOptions().dtype(spec.dtype);
    if (spec.data.empty()) return at::full(spec.shape, spec.fill, options);
    at::Tensor values = at::tensor(spec.data, at::kDouble);
    if (values.numel() != c10::multiply_integers(spec.shape)) {
      throw InvalidArgument(owner + ": " + std::to_string(values.numel()) + " values do not fill shape " +
                            shapeText(spec.shape));
    }
    return values.reshape(spec.shape).to(spec.dtype);
  }

  // A tensor by state-dict name: a module's own, or a layer's ("conv1.weight").
  at::Tensor stateTensor(const std::string& name) {
    if (const auto it = tensors_.find(name); it != tensors_.end()) return it->second;
    const auto dot = name.rfind('.');
    const std::string layerPath = dot == std::string::npos ? "" : name.substr(0, dot);
    const std::string tensorName = dot == std::string::npos ? name : name.substr(dot + 1);
    const auto layer = tree_.layers.find(layerPath);
    if (layer != tree_.layers.end()) {
      const auto& module = *layer->second.built.module.ptr();
      // named_parameters() returns a dict by value: find's pointer lives as long as it does, so it is held.
      const auto parameters = module.named_parameters(false);
      if (const auto* parameter = parameters.find(tensorName)) return *parameter;
      const auto buffers = module.named_buffers(false);
      if (const auto* buffer = buffers.find(tensorName)) return *buffer;
      std::string names;
      for (const auto& key : module.named_parameters(false).keys()) names += (names.empty() ? "" : ", ") + key;
      for (const auto& key : module.named_buffers(false).keys()) names += (names.empty() ? "" : ", ") + key;
      throw InvalidArgument("nn.init: " + layerPath + " has no tensor '" + tensorName + "' (it has " +
                            (names.empty() ? "none" : names) + ")");
    }
    throw InvalidState("firebrand bug: nn.init target '" + name + "' is not a tensor of the model");
  }

  void collectTies(const ModuleSpec& spec, const std::string& path) {
    for (const auto& tie : spec.ties) tiedTensors_[join(path, tie.name)] = stateTensor(tie.source);
    for (const auto& [name, child] : spec.children) collectTies(child, join(path, name));
  }

  std::shared_ptr<torch::nn::Module> assemble(const ModuleSpec& spec, const std::string& path) {
    if (spec.layer) {
      const auto it = tree_.layers.find(path);
      if (it == tree_.layers.end())
        throw InvalidState("firebrand bug: the layer at '" + path + "' was never constructed");
      for (const auto& tie : spec.ties) {
        tieLayerTensor(it->second.built, tie.name, tiedTensors_.at(join(path, tie.name)), it->second.owner, tie.source);
      }
      return it->second.built.module.ptr();
    }
    auto module = std::make_shared<torch::nn::Module>(spec.className);
    for (const std::string& name : fieldOrder(spec)) registerField(*module, spec, path, name);
    for (const auto& [name, child] : spec.children) module->register_module(name, assemble(child, join(path, name)));
    return module;
  }

  // The module's tensor fields in declaration order (PyTorch's state-dict order, tied fields included).
  static std::vector<std::string> fieldOrder(const ModuleSpec& spec) {
    if (!spec.order.empty()) return spec.order;
    std::vector<std::string> names;
    for (const auto& parameter : spec.parameters) names.push_back(parameter.name);
    for (const auto& buffer : spec.buffers) names.push_back(buffer.name);
    for (const auto& tie : spec.ties) names.push_back(tie.name);
    return names;
  }

  void registerField(torch::nn::Module& module, const ModuleSpec& spec, const std::string& path,
                     const std::string& name) {
    const auto named = [&](const auto& list) {
      return std::find_if(list.begin(), list.end(), [&](const auto& item) { return item.name == name; });
    };
    if (const auto parameter = named(spec.parameters); parameter != spec.parameters.end()) {
      module.register_parameter(name, tensors_.at(join(path, name)), parameter->requiresGrad);
    } else if (named(spec.buffers) != spec.buffers.end()) {
      module.register_buffer(name, tensors_.at(join(path, name)));
    } else if (const auto tie = named(spec.ties); tie != spec.ties.end()) {
      // The tensor keeps its own requires_grad (register_parameter would set it).
      const at::Tensor& tensor = tiedTensors_.at(join(path, name));
      if (tie->buffer)
        module.register_buffer(name, tensor);
      else
        module.register_parameter(name, tensor, tensor.requires_grad());
    } else {
      throw InvalidState("firebrand bug: module '" + path + "' orders a field '" + name + "' it does not hold");
    }
  }

  std::map<std::string, const ModuleSpec*> specs_;
  std::map<std::string, at::Tensor> tensors_;      // the modules' own parameters and buffers
  std::map<std::string, at::Tensor> tiedTensors_;  // by the state-dict name of the field that ties it
  ModuleTree tree_;
};

}  // namespace

ModuleTree buildModuleTree(const ModuleSpec& spec, const std::vector<ConstructionStep>& construction,
                           const std::vector<std::string>& valuesLoadedLater) {
  TreeBuilder builder(spec, valuesLoadedLater);
  // Layers to cast once a step is done: by that step's index.
  std::multimap<size_t, std::pair<std::string, at::ScalarType>> casts;
  for (size_t at = 0; at < construction.size(); ++at) {
    if (construction[at].kind != ConstructionStep::Kind::Layer) continue;
    if (const auto cast = earlyCast(construction, at))
      casts.emplace(cast->after, std::make_pair(construction[at].layerPath, cast->dtype));
  }
  for (size_t at = 0; at < construction.size(); ++at) {
    builder.construct(construction[at]);
    const auto [begin, end] = casts.equal_range(at);
    for (auto it = begin; it != end; ++it) builder.castModule(it->second.first, it->second.second);
  }
  return builder.finish(spec);
}

}  // namespace firebrand
