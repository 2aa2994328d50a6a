#include "core/model/lora_adapters.h"

#include <torch/utils.h>

#include <algorithm>

#include "core/errors.h"
#include "core/nn/layer_factory.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

constexpr const char* kPeftPrefix = "base_model.model.";

// A state-dict name as PEFT saves it: a DoRA magnitude without its ".weight".
std::string peftName(const std::string& name) {
  const std::string suffix = std::string(".") + kDoraMagnitude;
  if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return name;
  return name.substr(0, name.size() - std::string(".weight").size());
}

bool targets(const std::string& path, const std::string& target) {
  return path == target || (path.size() > target.size() &&
                            path.compare(path.size() - target.size() - 1, std::string::npos, "." + target) == 0);
}

std::string quotedFirstNames(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < 6; ++i) text += (i ? ", '" : "'") + names[i] + "'";
  return text + (names.size() > 6 ? ", ..." : "");
}

}  // namespace

std::vector<std::string> applyLora(Model& model, const LoraOptions& options) {
  auto layers = model.builtLayers();
  if (layers.empty()) {
    throw InvalidArgument(
        "lora: adapters go on built-in linear and conv2d layers, of models written as TypeScript modules or layer "
        "stacks; "
        "this model has none (a TorchScript model's layers are its own code)");
  }
  if (options.targetModules.empty())
    throw InvalidArgument("lora.targetModules: name at least one module (PEFT's target_modules)");
  std::vector<std::string> paths;
  for (const auto& target : options.targetModules) {
    bool any = false;
    for (const auto& [path, layer] : layers) any = any || targets(path, target);
    if (!any) {
      std::vector<std::string> names;
      for (const auto& item : layers) names.push_back(item.first);
      throw InvalidArgument("lora.targetModules: '" + target +
                            "' matches no layer (a layer path equal to it or ending with '." + target +
                            "'); the layers are " + quotedFirstNames(names));
    }
  }
  for (auto& [path, layer] : layers) {
    const bool targeted = std::any_of(options.targetModules.begin(), options.targetModules.end(),
                                      [&](const std::string& target) { return targets(path, target); });
    if (!targeted) continue;
    attachLora(*layer, options, "'" + path + "'");
    paths.push_back(path);
  }
  // A parameter under a module of modulesToSave trains, as the adapters do.
  const auto saved = [&](const std::string& name, const std::string& module) {
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
      if (targets(name.substr(0, dot), module)) return true;
    return false;
  };
  std::vector<std::string> frozen;
  std::set<std::string> matched;
  for (const auto& item : model.namedParameters()) {
    const std::string& name = item.key();
    const bool adapter = name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos ||
                         name.rfind("lora_A.", 0) == 0 || name.rfind("lora_B.", 0) == 0 ||
                         name.find("lora_magnitude_vector.") != std::string::npos;
    bool trained = adapter;
    for (const auto& module : options.modulesToSave) {
      if (adapter || !saved(name, module)) continue;
      trained = true;
      matched.insert(module);
    }
    if (!trained) frozen.push_back(name);
  }
  for (const auto& module : options.modulesToSave) {
    if (!matched.count(module))
      throw InvalidArgument("lora.modulesToSave: '" + module +
                            "' matches no module with parameters (a module path equal to it or ending with '." +
                            module + "')");
  }
  model.setEvalFrozenModules(false);
  model.setFrozen(frozen, true);
  return paths;
}

bool hasLora(Model& model) {
  for (const auto& [path, layer] : model.builtLayers()) {
    if (layer->lora) return true;
  }
  return false;
}

std::vector<std::string> modulesToSave(Model& model) {
  const std::set<std::string> adapters = adapterStateNames(model);
  std::vector<std::string> paths;
  for (const auto& item : model.namedParameters()) {
    if (!item.value().requires_grad() || adapters.count(item.key())) continue;
    const std::string path =
        item.key().substr(0, item.key().rfind('.') == std::string::npos ? 0 : item.key().rfind('.'));
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  }
  return paths;
}

TensorDict adapterWeights(Model& model) {
  TensorDict weights;
  for (const auto& [path, layer] : model.builtLayers()) {
    if (!layer->lora) continue;
    const std::string prefix = kPeftPrefix + (path.empty() ? "" : path + ".");
    weights[prefix + "lora_A.weight"] = layer->lora->aWeight.detach().to(at::kCPU).clone();
    weights[prefix + "lora_B.weight"] = layer->lora->bWeight.detach().to(at::kCPU).clone();
    settleDoraMagnitude(*layer->lora);
    if (layer->lora->magnitude.defined())
      weights[peftName(prefix + kDoraMagnitude)] = layer->lora->magnitude.detach().to(at::kCPU).clone();
  }
  if (weights.empty())
    throw InvalidState("saveAdapter: the model has no LoRA adapters (give the trainer a lora config)");
  // Modules trained beside the adapters go whole, parameters and buffers, as PEFT saves modules_to_save.
  const std::vector<std::string> saved = modulesToSave(model);
  const std::set<std::string> adapters = adapterStateNames(model);
  for (const auto& [name, tensor] : model.stateTensors()) {
    const size_t dot = name.rfind('.');
    const std::string owner = dot == std::string::npos ? "" : name.substr(0, dot);
    if (std::find(saved.begin(), saved.end(), owner) == saved.end() || adapters.count(name)) continue;
    weights[kPeftPrefix + name] = tensor.detach().to(at::kCPU).clone();
  }
  return weights;
}

std::set<std::string> adapterStateNames(Model& model) {
  std::set<std::string> names;
  for (const auto& [path, layer] : model.builtLayers()) {
    if (!layer->lora) continue;
    const std::string prefix = path.empty() ? "" : path + ".";
    names.insert({prefix + "lora_A.weight", prefix + "lora_B.weight"});
    if (layer->lora->magnitude.defined()) names.insert(prefix + kDoraMagnitude);
  }
  return names;
}

void loadAdapterWeights(Model& model, const TensorDict& weights, const std::string& origin) {
  const std::set<std::string> adapters = adapterStateNames(model);
  TensorDict state = model.stateTensors();
  std::vector<std::string> missing, unexpected;
  for (const auto& name : adapters) {
    if (!weights.count(peftName(kPeftPrefix + name))) missing.push_back(peftName(kPeftPrefix + name));
  }
  // Beside the adapters, whole modules (PEFT's modules_to_save) under the model's own names.
  TensorDict modules;
  for (const auto& [name, value] : weights) {
    const std::string local = name.rfind(kPeftPrefix, 0) == 0 ? name.substr(std::string(kPeftPrefix).size()) : name;
    if (adapters.count(local) || adapters.count(local + ".weight")) continue;
    if (!state.count(local)) {
      unexpected.push_back(name);
    } else if (!value.sizes().equals(state.at(local).sizes())) {
      throw ShapeMismatch(origin + ": module weight '" + name + "' has shape " + shapeText(value) +
                          " but this model's is " + shapeText(state.at(local)));
    } else {
      modules[local] = value;
    }
  }
  if (!missing.empty() || !unexpected.empty()) {
    throw InvalidArgument(origin + ": the adapter is for another model" +
                          (missing.empty() ? "" : "; missing: " + quotedFirstNames(missing)) +
                          (unexpected.empty() ? "" : "; unexpected: " + quotedFirstNames(unexpected)));
  }
  torch::NoGradGuard noGrad;
  for (const auto& [path, layer] : model.builtLayers()) {
    if (!layer->lora) continue;
    const std::string prefix = kPeftPrefix + (path.empty() ? "" : path + ".");
    for (auto* target : {&layer->lora->aWeight, &layer->lora->bWeight}) {
      const std::string name = prefix + (target == &layer->lora->aWeight ? "lora_A.weight" : "lora_B.weight");
      const at::Tensor& value = weights.at(name);
      if (!value.sizes().equals(target->sizes())) {
        throw ShapeMismatch(origin + ": adapter weight '" + name + "' has shape " + shapeText(value) +
                            " but this model's is " + shapeText(*target) + " (another r or layer size)");
      }
      target->copy_(value);
    }
    if (layer->lora->magnitude.defined()) {
      const std::string name = peftName(prefix + kDoraMagnitude);
      const at::Tensor& value = weights.at(name);
      if (!value.sizes().equals(layer->lora->magnitude.sizes())) {
        throw ShapeMismatch(origin + ": DoRA magnitude '" + name + "' has shape " + shapeText(value) +
                            " but this model's is " + shapeText(layer->lora->magnitude));
      }
      layer->lora->magnitude.copy_(value);
      layer->lora->magnitudeSet = true;
    }
  }
  for (const auto& [name, value] : modules) state.at(name).copy_(value);
}

void mergeLoraAdapters(Model& model) {
  const auto tied = model.tiedNames();
  for (auto& [path, layer] : model.builtLayers()) {
    if (!layer->lora) continue;
    // A weight held under two names (a head tied to the input embeddings) is one tensor: W + BA would
    // change both, as PEFT's merge does. Refused before anything merges.
    const std::string weight = path + ".weight";
    for (const auto& [alias, name] : tied) {
      if (alias != weight && name != weight) continue;
      throw InvalidState("mergeAdapter: '" + path + "' has an adapter, and its weight is tied to '" +
                         (alias == weight ? name : alias) +
                         "' (tie_word_embeddings): merging would change that one too. Keep the adapter unmerged "
                         "(saveAdapter; loadAdapter at serving), or train without '" +
                         path + "' in targetModules");
    }
  }
  for (auto& [path, layer] : model.builtLayers()) mergeLora(*layer);
}

}  // namespace firebrand
