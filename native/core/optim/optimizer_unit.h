// One optimizer with its learning-rate schedule. A model has one for all its
// parameters, or several (GAN-style): each owns the parameters under some
// name prefixes and is stepped on its own loss from the model's training_step.
#pragma once
#include <torch/optim/optimizer.h>
#include <torch/ordered_dict.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/optim/lr_scheduler.h"
#include "core/optim/optimizer_factory.h"

namespace firebrand {

struct OptimizerUnitSpec {
  std::string name;  // "generator"; "" for a model's only optimizer
  OptimizerSpec optimizer;
  std::vector<std::string> params;  // name prefixes; empty: every parameter
  std::string loss = "loss";        // the training_step entry it steps on
};

class OptimizerUnit {
 public:
  OptimizerUnit(const OptimizerUnitSpec& spec, const torch::OrderedDict<std::string, at::Tensor>& parameters,
                const SchedulerSpec& scheduler);

  const std::string& name() const { return name_; }
  const std::string& lossKey() const { return lossKey_; }
  const std::vector<at::Tensor>& parameters() const { return parameters_; }
  // Whether the parameter `name` is this unit's (by its params prefixes; with none, every one is).
  bool owns(const std::string& name) const;
  // Unfreezing: `parameters` join the optimizer as a new group, `lr` its base learning rate (the
  // schedule scales it as it scales the others), its other options the optimizer's defaults.
  void addParameterGroup(const std::vector<at::Tensor>& parameters, double lr);
  double firstBaseLearningRate() const { return baseLrs_.front(); }

  void zeroGrad();
  // The optimizer's state made now where it can be (Adam's moments), not at the first step.
  void makeState();
  // Steps the optimizer (on the owned parameters only, when sharded), then the schedule; remembers the
  // learning rate used.
  void step();

  // ZeRO stage 1: from now on this process holds and updates the state of the parameters `owned` accepts
  // only; another rank steps the others and sends their new values.
  void shardState(std::function<bool(const at::Tensor&)> owned);
  // The bytes of the state tensors this process holds (moments, momentum buffers).
  int64_t stateBytes() const;
  // The optimizer's state as a libtorch archive in memory; another process's archive added to this
  // one's state (its parameters' entries join, replacing any there; options are the same on every rank).
  std::string stateArchive() const;
  void addStateArchive(const std::string& archive);
  // Drops the state of the parameters not owned (after a gathered state was saved, or a whole one loaded).
  void dropForeignState();
  void startSchedule(int64_t totalSteps);
  void onMetric(double value) { scheduler_.onMetric(*optimizer_, value); }
  const LrScheduler& scheduler() const { return scheduler_; }
  // Makes `lr` the first group's base learning rate, the others' in proportion.
  void setBaseLearningRate(double lr);
  // The learning rate each group's next step uses, and the groups' names:
  // the unit's (or the optimizer's) name, with /pg<i> when it has several groups.
  std::vector<double> learningRates() const;
  std::vector<std::string> learningRateNames() const;
  double lastStepLr() const { return lastStepLr_; }

  // The optimizer's state (moments, steps, groups' options) in libtorch's archive format.
  void saveOptimizer(const std::string& path) const;
  void loadOptimizer(const std::string& path);
  // The schedule's position and the last step's lr, as float64 values.
  at::Tensor scheduleState() const;
  void restoreSchedule(const at::Tensor& state);

 private:
  std::string name_;
  std::string optimizerName_;  // "adamw"
  std::string lossKey_;
  std::vector<std::string> prefixes_;
  std::vector<at::Tensor> parameters_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  LrScheduler scheduler_;
  std::function<bool(const at::Tensor&)> owned_;  // empty: every parameter's state is here
  std::vector<double> baseLrs_;                   // each group's lr as configured; schedules scale these
  double lastStepLr_ = 0;
};

// Splits the model's parameters among the units by prefix: every parameter
// must belong to exactly one unit.
std::vector<OptimizerUnit> makeOptimizerUnits(const std::vector<OptimizerUnitSpec>& specs,
                                              const torch::OrderedDict<std::string, at::Tensor>& parameters,
                                              const SchedulerSpec& scheduler);

}  // namespace firebrand
