#include "core/train/fine_tuning.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/errors.h"
#include "core/io/safetensors_reader.h"
#include "core/io/safetensors_writer.h"
#include "core/model/freezing.h"
#include "core/model/int8_quantization.h"
#include "core/model/lora_adapters.h"

namespace firebrand {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : "\n") + name;
  return text;
}

// The double that reads back as itself.
std::string exactNumberText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

}  // namespace

void refuseGroupsOfFrozenOnly(const std::vector<OptimizerUnitSpec>& optimizers,
                              const torch::OrderedDict<std::string, at::Tensor>& trainable,
                              const std::vector<std::string>& frozen) {
  const auto under = [](const std::string& prefix, const std::string& name) {
    return name.compare(0, prefix.size(), prefix) == 0;
  };
  for (const auto& unit : optimizers) {
    for (size_t i = 0; i < unit.optimizer.paramGroups.size(); ++i) {
      for (const std::string& prefix : unit.optimizer.paramGroups[i].params) {
        const bool takesTrainable = std::any_of(trainable.begin(), trainable.end(),
                                                [&](const auto& item) { return under(prefix, item.key()); });
        const bool takesFrozen =
            std::any_of(frozen.begin(), frozen.end(), [&](const std::string& name) { return under(prefix, name); });
        if (takesTrainable || !takesFrozen) continue;
        throw InvalidArgument(
            "optimizer.paramGroups[" + std::to_string(i) + "]: '" + prefix +
            "' takes only frozen parameters (config.freeze), " +
            "which no optimizer holds until they are unfrozen; leave it out of paramGroups and give their rate " +
            "when unfreezing: trainer.unfreeze(patterns, { lr })");
      }
    }
  }
}

FineTuning::FineTuning(Model& model, std::vector<OptimizerUnit>& units, LearningRateControl& learningRates,
                       Checks checks)
    : model_(model), units_(units), learningRates_(learningRates), checks_(std::move(checks)) {}

std::vector<std::string> FineTuning::freeze(const std::vector<std::string>& patterns) {
  if (checks_.distributed())
    throw InvalidState(
        "freeze: the trainer is one rank of a distributed run; freeze with config.freeze before it starts");
  checks_.requireStepBoundary("freeze");
  return freezeMatching(model_, patterns, "freeze");
}

std::vector<std::string> FineTuning::unfreeze(const std::vector<std::string>& patterns, std::optional<double> lr) {
  if (checks_.distributed())
    throw InvalidState("unfreeze: the trainer is one rank of a distributed run, whose gradient buckets are fixed");
  checks_.requireStepBoundary("unfreeze");
  const std::vector<std::string> names = unfreezeMatching(model_, patterns, "unfreeze");
  const auto named = model_.namedParameters();
  // Those no optimizer holds yet form one new group per optimizer that owns them.
  std::vector<AddedGroup> groups(units_.size());
  for (const std::string& name : names) {
    const at::Tensor& parameter = named[name];
    bool held = false;
    for (const auto& unit : units_) {
      for (const auto& owned : unit.parameters()) held = held || owned.is_same(parameter);
    }
    if (held) continue;
    for (size_t i = 0; i < units_.size(); ++i) {
      if (!units_[i].owns(name)) continue;
      groups[i].parameters.push_back(name);
      break;
    }
  }
  for (size_t i = 0; i < units_.size(); ++i) {
    if (groups[i].parameters.empty()) continue;
    groups[i].unit = i;
    groups[i].lr = lr.value_or(units_[i].firstBaseLearningRate() / 10.0);
    addGroup(groups[i]);
  }
  // A hook reading learningRates/learningRateNames next sees the new groups.
  learningRates_.publish();
  return names;
}

void FineTuning::addGroup(const AddedGroup& group) {
  const auto named = model_.namedParameters();
  std::vector<at::Tensor> parameters;
  for (const auto& name : group.parameters) parameters.push_back(named[name]);
  units_.at(group.unit).addParameterGroup(parameters, group.lr);
  addedGroups_.push_back(group);
}

std::map<std::string, std::string> FineTuning::state() const {
  std::map<std::string, std::string> state{{"frozen", joined(model_.frozenParameters())},
                                           {"added_groups", std::to_string(addedGroups_.size())}};
  for (size_t i = 0; i < addedGroups_.size(); ++i) {
    const std::string key = "added_group." + std::to_string(i) + ".";
    state[key + "unit"] = std::to_string(addedGroups_[i].unit);
    state[key + "lr"] = exactNumberText(addedGroups_[i].lr);
    state[key + "parameters"] = joined(addedGroups_[i].parameters);
  }
  return state;
}

void FineTuning::restore(const std::map<std::string, std::string>& state, const std::string& path) {
  const auto field = [&](const std::string& key) -> const std::string& {
    const auto it = state.find(key);
    if (it == state.end()) throw FileError(path + ": the checkpoint's metadata lacks '" + key + "'");
    return it->second;
  };
  if (state.find("frozen") == state.end()) return;  // written before fine-tuning was saved: nothing frozen
  const std::vector<std::string> names = parameterNames(model_);
  const std::vector<std::string> frozen = lines(field("frozen"));
  for (const auto& name : frozen) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw FileError(path + ": the checkpoint froze parameter '" + name + "', which this model does not have");
    }
  }
  model_.setFrozen(names, false);
  model_.setFrozen(frozen, true);
  // Groups a run unfroze join again, in order, unless this engine already added them.
  const size_t count = std::stoul(field("added_groups"));
  for (size_t i = addedGroups_.size(); i < count; ++i) {
    const std::string key = "added_group." + std::to_string(i) + ".";
    addGroup({std::stoul(field(key + "unit")), lines(field(key + "parameters")), std::stod(field(key + "lr"))});
  }
}

std::vector<std::string> FineTuning::saveAdapter(const std::string& path) const {
  writeSafetensors(path, adapterWeights(model_), {{"format", "pt"}});
  return modulesToSave(model_);
}

void FineTuning::loadAdapter(const std::string& path) {
  checks_.requireStepBoundary("loadAdapter");
  loadAdapterWeights(model_, readSafetensors(path).tensors, path);
}

void FineTuning::mergeAdapters() {
  if (!hasLora(model_)) throw InvalidState("mergeAdapter: the model has no LoRA adapters to merge");
  const std::string quantized = firstQuantizedLayer(model_);
  if (!quantized.empty()) {
    throw InvalidState("mergeAdapter: '" + quantized +
                       "' holds int8 weights (fromPretrained quantize: 'int8'), which a merge would round again; "
                       "save the adapter (saveAdapter) and merge it into the unquantized checkpoint");
  }
  mergeLoraAdapters(model_);
  adaptersMerged_ = true;
}

}  // namespace firebrand
