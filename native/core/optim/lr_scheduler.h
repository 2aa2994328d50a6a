// Learning-rate schedules, stepped once per optimizer step (not per
// micro-batch), with PyTorch's and Hugging Face's names and formulas:
//   constant, linear, cosine (warmup then decay, as transformers'
//   get_*_schedule_with_warmup), step, multistep, exponential, onecycle
//   (torch.optim.lr_scheduler), and reduce_on_plateau, driven by an
//   evaluation metric instead of steps.
#pragma once
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/options/option_value.h"

namespace firebrand {

// As objective-schemas.ts resolved it: every field given.
struct SchedulerSpec {
  std::string name;
  OptionMap options;
};

class LrScheduler {
 public:
  // Nothing is applied until start().
  explicit LrScheduler(const SchedulerSpec& spec);

  // Binds the schedule to a run of `totalSteps` optimizer steps from the
  // groups' base learning rates, and sets the first step's learning rate.
  void start(torch::optim::Optimizer& optimizer, const std::vector<double>& baseLrs, int64_t totalSteps);
  void afterOptimizerStep(torch::optim::Optimizer& optimizer);
  // A group the optimizer gained (unfreezing): its base learning rate, scaled from here on as the
  // others' are; its lr is set for the next step.
  void addGroup(torch::optim::Optimizer& optimizer, double baseLr);
  // Scales the base learning rates (and onecycle's maxLr) by `scale` from
  // here on, across later start()s too; the groups' rates follow at once.
  void setScale(double scale, torch::optim::Optimizer& optimizer);
  // reduce_on_plateau: one evaluation's value of the monitored metric.
  void onMetric(torch::optim::Optimizer& optimizer, double value);

  bool drivenByMetric() const { return kind_ == Kind::ReduceOnPlateau; }
  // Whether the schedule needs the run's total steps (decays to an end).
  bool plansOverTotalSteps() const { return kind_ == Kind::Linear || kind_ == Kind::Cosine || kind_ == Kind::OneCycle; }
  const std::string& name() const { return name_; }

  // The schedule's position (step, reduce_on_plateau's best value and
  // counters, the base scale), for checkpoints; restore() also re-applies the step's lr.
  std::vector<double> state() const;
  void restore(torch::optim::Optimizer& optimizer, const std::vector<double>& state);
  const std::string& monitor() const { return monitor_; }

 private:
  enum class Kind { Constant, Linear, Cosine, Step, MultiStep, Exponential, OneCycle, ReduceOnPlateau };

  void apply(torch::optim::Optimizer& optimizer) const;
  double factor(int64_t step) const;
  void applyOneCycle(torch::optim::Optimizer& optimizer) const;
  bool improves(double value) const;

  Kind kind_ = Kind::Constant;
  std::string name_;
  // Warmup-and-decay schedules.
  int64_t warmupSteps_ = 0;
  double numCycles_ = 0.5;
  // step, multistep, exponential.
  int64_t stepSize_ = 1;
  std::vector<int64_t> milestones_;
  double gamma_ = 0.1;
  // onecycle.
  double maxLr_ = 0;
  double pctStart_ = 0.3;
  bool cosineAnneal_ = true;
  double divFactor_ = 25;
  double finalDivFactor_ = 1e4;
  bool cycleMomentum_ = true;
  double baseMomentum_ = 0.85;
  double maxMomentum_ = 0.95;
  // reduce_on_plateau.
  std::string monitor_;
  bool maximize_ = false;
  double plateauFactor_ = 0.1;
  int64_t patience_ = 10;
  double threshold_ = 1e-4;
  bool relativeThreshold_ = true;
  int64_t cooldown_ = 0;
  double minLr_ = 0;
  double eps_ = 1e-8;
  double best_ = 0;
  int64_t badEvaluations_ = 0;
  int64_t cooldownLeft_ = 0;

  std::vector<double> baseLrs_;
  double scale_ = 1;  // setScale's
  int64_t step_ = 0;
  int64_t totalSteps_ = 0;
};

}  // namespace firebrand
