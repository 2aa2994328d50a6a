// A trainer's fine-tuning: what trains (freezing and unfreezing parameters by
// pattern, unfrozen ones joining their optimizer as a new group, Lightning's
// BaseFinetuning.unfreeze_and_add_param_group), LoRA adapters saved, loaded
// and merged (PEFT's layout), and what was frozen and added kept in checkpoints.
#pragma once
#include <ATen/core/Tensor.h>
#include <torch/ordered_dict.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/optim/optimizer_unit.h"
#include "core/train/learning_rate_control.h"

namespace firebrand {

// A paramGroups prefix that takes only frozen parameters is an error saying so (rather than "the prefix
// of no parameter"): frozen ones join the optimizer when unfrozen, with unfreeze's lr.
void refuseGroupsOfFrozenOnly(const std::vector<OptimizerUnitSpec>& optimizers,
                              const torch::OrderedDict<std::string, at::Tensor>& trainable,
                              const std::vector<std::string>& frozen);

class FineTuning {
 public:
  // What the trainer says before a change: whether it is one rank of several, and a throw (naming the
  // operation) while a per-batch hook runs inside an accumulation group.
  struct Checks {
    std::function<bool()> distributed;
    std::function<void(const std::string& operation)> requireStepBoundary;
  };
  // `model`, `units` and `learningRates` are the trainer's, which outlive this.
  FineTuning(Model& model, std::vector<OptimizerUnit>& units, LearningRateControl& learningRates, Checks checks);

  // Freezes the parameters that `patterns` take (name_patterns.h): autograd computes no gradient for
  // them and modules left with no trainable parameter run in eval mode. Returns their names. A pattern
  // that takes nothing, or a freeze that would leave nothing to train, is an error.
  std::vector<std::string> freeze(const std::vector<std::string>& patterns);
  // Unfreezes them; those no optimizer holds join their optimizer as a new parameter group with base
  // learning rate `lr` (default: its first group's / 10, as Lightning's BaseFinetuning).
  std::vector<std::string> unfreeze(const std::vector<std::string>& patterns, std::optional<double> lr);
  // The frozen parameters and added groups as checkpoint metadata, and their restoration (before the
  // optimizers' state, whose saved groups must find theirs).
  std::map<std::string, std::string> state() const;
  void restore(const std::map<std::string, std::string>& state, const std::string& path);
  // LoRA adapters (config lora): saved alone under PEFT's names (.safetensors), returning the paths of
  // the modules saved whole beside them (PEFT's modules_to_save); loaded back; merged into the weights
  // for export, after which the trainer no longer fits.
  std::vector<std::string> saveAdapter(const std::string& path) const;
  void loadAdapter(const std::string& path);
  void mergeAdapters();
  bool adaptersMerged() const { return adaptersMerged_; }

 private:
  // A group unfreeze() added: the unit's index, the parameters, the lr.
  struct AddedGroup {
    size_t unit;
    std::vector<std::string> parameters;
    double lr;
  };
  void addGroup(const AddedGroup& group);

  Model& model_;
  std::vector<OptimizerUnit>& units_;
  LearningRateControl& learningRates_;
  Checks checks_;
  std::vector<AddedGroup> addedGroups_;  // in order, for checkpoints
  bool adaptersMerged_ = false;
};

}  // namespace firebrand
