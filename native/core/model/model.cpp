#include "core/model/model.h"

#include <c10/util/hash.h>

#include <algorithm>
#include <map>

#include "core/errors.h"
#include "core/runtime/huge_pages.h"
#include "core/shape_text.h"

namespace firebrand {

OnnxGraph Model::onnxGraph(const TensorDict&, const OnnxExportOptions&) {
  throw NotExportable("exportOnnx: this model has no traced graph to write as ONNX");
}

TensorDict Model::trainingStep(const TensorDict&) { throw InvalidState("this model defines no training_step"); }

TensorDict Model::validationStep(const TensorDict&) { throw InvalidState("this model defines no validation_step"); }

std::string Model::describeInputs(const Batch& batch) const {
  return "samples of shape " + shapeText(batch.inputs().sizes().slice(1));
}

void Model::setTraining(bool training) {
  setModelTraining(training);
  if (!training) return;
  setModulesTraining(frozenModules_, false);
}

void Model::setFrozen(const std::vector<std::string>& names, bool frozen) {
  const auto named = namedParameters();
  for (const std::string& name : names) {
    const at::Tensor* parameter = named.find(name);
    if (!parameter) throw InvalidState("firebrand bug: setFrozen: the model has no parameter '" + name + "'");
    parameter->requires_grad_(!frozen);
  }
  // Modules under which every parameter is frozen (the outermost such: eval mode reaches their children).
  frozenModules_.clear();
  for (const std::string& path : evalFrozenModules_ ? modulePaths() : std::vector<std::string>()) {
    const bool inside = std::any_of(frozenModules_.begin(), frozenModules_.end(), [&](const std::string& outer) {
      return path.compare(0, outer.size() + 1, outer + ".") == 0;
    });
    if (inside) continue;
    bool any = false, all = true;
    for (const auto& item : named) {
      if (item.key().compare(0, path.size() + 1, path + ".") != 0) continue;
      any = true;
      all = all && !item.value().requires_grad();
    }
    if (any && all) frozenModules_.push_back(path);
  }
  setTraining(isTraining());
}

std::vector<std::string> Model::frozenParameters() const {
  std::vector<std::string> names;
  for (const auto& item : namedParameters()) {
    if (!item.value().requires_grad()) names.push_back(item.key());
  }
  return names;
}

std::vector<std::string> Model::checkpointActivations(const std::vector<std::string>&) {
  throw InvalidArgument(
      "config.activationCheckpointing: only models written as TypeScript modules recompute activations "
      "(a TorchScript model keeps them)");
}

void Model::refusePadding(const at::Tensor& mask) {
  if (!mask.all().item<bool>()) {
    throw InvalidArgument(
        "generate: prompts of different lengths are padded, and the model takes the token ids alone; give "
        "prompts of one length, or a model that takes { input_ids, attention_mask } (fromPretrained(path, "
        "{ attentionMask: true }) for the Llama family)");
  }
}

at::Tensor Model::forwardTokens(const at::Tensor& ids, const at::Tensor& mask, DecodeCache* cache) {
  if (cache) {
    throw NotIncremental(
        "the model is TorchScript, whose forward runs on the whole sequence; "
        "a model written as TypeScript modules decodes from a cache");
  }
  refusePadding(mask);
  return forward(ids);
}

const OutputLayout& Model::outputLayout() const {
  static const OutputLayout kOneTensor;
  return kOneTensor;
}

void Model::selectOutput(const std::string& name) {
  const OutputLayout& layout = outputLayout();
  if (layout.kind == OutputLayout::Kind::Tensor) {
    throw InvalidArgument("config.lossOutput is '" + name +
                          "', but the model's forward returns one tensor; lossOutput picks one of several outputs");
  }
  const auto it = std::find(layout.names.begin(), layout.names.end(), name);
  if (it == layout.names.end()) {
    std::string names;
    for (const auto& known : layout.names) names += (names.empty() ? "'" : ", '") + known + "'";
    throw InvalidArgument("config.lossOutput is '" + name +
                          "', which the model's forward does not return; it returns " + names);
  }
  selectedOutput_ = static_cast<size_t>(it - layout.names.begin());
}

TensorDict Model::stateTensors() const {
  TensorDict state;
  for (const auto& named : {namedParameters(), namedBuffers()}) {
    for (const auto& item : named) state.emplace(item.key(), item.value());
  }
  for (const auto& [alias, name] : tiedNames()) state.emplace(alias, state.at(name));
  for (const auto& name : nonPersistentBuffers()) state.erase(name);
  return state;
}

std::vector<std::string> Model::registrationOrder() const {
  const auto parameters = namedParameters();
  const auto tied = tiedNames();
  std::vector<std::string> names;
  for (const auto& item : parameters) names.push_back(item.key());
  for (const auto& [alias, name] : tied) {
    if (parameters.contains(name)) names.push_back(alias);
  }
  for (const auto& item : namedBuffers()) names.push_back(item.key());
  for (const auto& [alias, name] : tied) {
    if (!parameters.contains(name)) names.push_back(alias);
  }
  return names;
}

std::vector<std::pair<std::string, at::Tensor>> Model::orderedStateTensors() const {
  const TensorDict state = stateTensors();
  const auto ownerOf = [](const std::string& name) {
    const size_t dot = name.rfind('.');
    return dot == std::string::npos ? std::string() : name.substr(0, dot);
  };
  // Each module's state names in the order PyTorch registers them: parameters, then buffers.
  std::map<std::string, std::vector<std::string>> byModule;
  const std::vector<std::string> names = registrationOrder();
  for (const auto& name : names) {
    if (state.count(name)) byModule[ownerOf(name)].push_back(name);
  }
  std::vector<std::string> modules{""};
  for (const auto& path : modulePaths()) modules.push_back(path);
  std::vector<std::pair<std::string, at::Tensor>> ordered;
  for (const auto& path : modules) {
    const auto it = byModule.find(path);
    if (it == byModule.end()) continue;
    for (const auto& name : it->second) ordered.emplace_back(name, state.at(name));
    byModule.erase(it);
  }
  // Anything a module list did not reach keeps its place after them (never dropped).
  for (const auto& name : names) {
    if (byModule.count(ownerOf(name))) ordered.emplace_back(name, state.at(name));
  }
  return ordered;
}

std::vector<at::Tensor> Model::parameters() const { return namedParameters().values(); }

void Model::visitParameters(const std::function<bool(const at::Tensor&)>& visit) const {
  for (const auto& item : namedParameters()) {
    if (!visit(item.value())) return;
  }
}

at::ScalarType Model::parameterDtype() const {
  at::ScalarType dtype = at::kFloat;
  visitParameters([&](const at::Tensor& parameter) {
    dtype = parameter.scalar_type();
    return false;
  });
  return dtype;
}

uint64_t Model::weightsFingerprint() const {
  uint64_t fingerprint = 0;
  visitParameters([&](const at::Tensor& parameter) {
    fingerprint += c10::hash_combine(reinterpret_cast<size_t>(parameter.unsafeGetTensorImpl()),
                                     static_cast<size_t>(parameter._version()));
    return true;
  });
  return fingerprint;
}

int64_t Model::parameterCount() const {
  int64_t count = 0;
  for (const auto& parameter : parameters()) count += parameter.numel();
  return count;
}

void Model::keepPredictionMemory() {
  if (!predictionMemory_) predictionMemory_ = std::make_unique<CpuMemoryCache::Retainer>();
}

void Model::backWeightsWithHugePages() {
  std::vector<at::Tensor> weights = parameters();
  for (const auto& item : namedBuffers()) weights.push_back(item.value());
  size_t fingerprint = weights.size();
  for (const at::Tensor& weight : weights) {
    const void* data = weight.has_storage() ? weight.storage().data() : nullptr;
    fingerprint = c10::hash_combine(fingerprint, reinterpret_cast<size_t>(data));
  }
  if (fingerprint == hugePageWeights_) return;
  backWithHugePages(weights);
  hugePageWeights_ = fingerprint;
}

}  // namespace firebrand
