#include "core/optim/lr_scheduler.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "core/options/resolved_options.h"

namespace firebrand {
namespace {

constexpr double kPi = 3.14159265358979323846;

// transformers' warmup: 0 -> 1 linearly over the warmup steps.
double warmupFactor(int64_t step, int64_t warmupSteps) {
  return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmupSteps));
}

double anneal(double start, double end, double pct, bool cosine) {
  return cosine ? end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1) : (end - start) * pct + start;
}

// The momentum OneCycle cycles: SGD's and RMSprop's momentum, Adam's beta1.
void setMomentum(torch::optim::OptimizerOptions& options, double momentum) {
  if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&options)) {
    sgd->momentum(momentum);
  } else if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&options)) {
    adam->betas({momentum, std::get<1>(adam->betas())});
  } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&options)) {
    adamw->betas({momentum, std::get<1>(adamw->betas())});
  } else if (auto* rmsprop = dynamic_cast<torch::optim::RMSpropOptions*>(&options)) {
    rmsprop->momentum(momentum);
  } else {
    throw InvalidArgument(
        "lrScheduler (onecycle): cycleMomentum needs an optimizer with a momentum "
        "(sgd, adam, adamw, rmsprop); set cycleMomentum: false");
  }
}

}  // namespace

LrScheduler::LrScheduler(const SchedulerSpec& spec) : name_(spec.name) {
  ResolvedOptions options("lrScheduler (" + spec.name + ")", spec.options);
  if (name_ == "constant" || name_ == "linear" || name_ == "cosine") {
    kind_ = name_ == "constant" ? Kind::Constant : name_ == "linear" ? Kind::Linear : Kind::Cosine;
    warmupSteps_ = options.integer("warmupSteps");
    if (kind_ == Kind::Cosine) numCycles_ = options.number("numCycles");
  } else if (name_ == "step") {
    kind_ = Kind::Step;
    stepSize_ = options.integer("stepSize");
    gamma_ = options.number("gamma");
  } else if (name_ == "multistep") {
    kind_ = Kind::MultiStep;
    milestones_ = options.integers("milestones");
    gamma_ = options.number("gamma");
  } else if (name_ == "exponential") {
    kind_ = Kind::Exponential;
    gamma_ = options.number("gamma");
  } else if (name_ == "onecycle") {
    kind_ = Kind::OneCycle;
    maxLr_ = options.number("maxLr");
    pctStart_ = options.number("pctStart");
    cosineAnneal_ = options.text("annealStrategy") == "cos";
    divFactor_ = options.number("divFactor");
    finalDivFactor_ = options.number("finalDivFactor");
    cycleMomentum_ = options.flag("cycleMomentum");
    baseMomentum_ = options.number("baseMomentum");
    maxMomentum_ = options.number("maxMomentum");
  } else if (name_ == "reduce_on_plateau") {
    kind_ = Kind::ReduceOnPlateau;
    monitor_ = options.text("monitor");
    maximize_ = options.text("mode") == "max";
    plateauFactor_ = options.number("factor");
    patience_ = options.integer("patience");
    threshold_ = options.number("threshold");
    relativeThreshold_ = options.text("thresholdMode") == "rel";
    cooldown_ = options.integer("cooldown");
    minLr_ = options.number("minLr");
    eps_ = options.number("eps");
  } else {
    throw InvalidState("firebrand bug: lrScheduler '" + name_ + "' reached C++ unresolved");
  }
  options.finish();
}

void LrScheduler::start(torch::optim::Optimizer& optimizer, const std::vector<double>& baseLrs, int64_t totalSteps) {
  baseLrs_ = baseLrs;
  totalSteps_ = totalSteps;
  step_ = 0;
  best_ = maximize_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  badEvaluations_ = 0;
  cooldownLeft_ = 0;
  if (kind_ == Kind::OneCycle && cycleMomentum_) {
    for (auto& group : optimizer.param_groups()) setMomentum(group.options(), maxMomentum_);
  }
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(baseLrs_[i] * scale_);
  apply(optimizer);
}

void LrScheduler::setScale(double scale, torch::optim::Optimizer& optimizer) {
  if (!std::isfinite(scale) || scale < 0) {
    throw InvalidArgument("learning rate: must be a finite number >= 0 (scale " + std::to_string(scale) + ")");
  }
  scale_ = scale;
  if (kind_ != Kind::ReduceOnPlateau) {
    apply(optimizer);
    return;
  }
  // reduce_on_plateau's rate is its own: a set rate replaces it, reductions start over from there.
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(baseLrs_[i] * scale_);
}

std::vector<double> LrScheduler::state() const {
  return {static_cast<double>(step_), best_, static_cast<double>(badEvaluations_), static_cast<double>(cooldownLeft_),
          scale_};
}

void LrScheduler::restore(torch::optim::Optimizer& optimizer, const std::vector<double>& state) {
  if (state.size() != 5)
    throw InvalidArgument("scheduler state: expected 5 values, got " + std::to_string(state.size()));
  step_ = static_cast<int64_t>(state[0]);
  best_ = state[1];
  badEvaluations_ = static_cast<int64_t>(state[2]);
  cooldownLeft_ = static_cast<int64_t>(state[3]);
  scale_ = state[4];
  // reduce_on_plateau's lr lives in the optimizer's groups, restored with them.
  if (kind_ != Kind::ReduceOnPlateau) apply(optimizer);
}

void LrScheduler::afterOptimizerStep(torch::optim::Optimizer& optimizer) {
  ++step_;
  apply(optimizer);
}

double LrScheduler::factor(int64_t step) const {
  switch (kind_) {
    case Kind::Constant:
      return step < warmupSteps_ ? warmupFactor(step, warmupSteps_) : 1.0;
    case Kind::Linear:
      if (step < warmupSteps_) return warmupFactor(step, warmupSteps_);
      return std::max(0.0, static_cast<double>(totalSteps_ - step) /
                               static_cast<double>(std::max<int64_t>(1, totalSteps_ - warmupSteps_)));
    case Kind::Cosine: {
      if (step < warmupSteps_) return warmupFactor(step, warmupSteps_);
      const double progress = static_cast<double>(step - warmupSteps_) /
                              static_cast<double>(std::max<int64_t>(1, totalSteps_ - warmupSteps_));
      return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * numCycles_ * 2.0 * progress)));
    }
    case Kind::Step:
      return std::pow(gamma_, static_cast<double>(step / stepSize_));
    case Kind::MultiStep: {
      const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), step) - milestones_.begin();
      return std::pow(gamma_, static_cast<double>(passed));
    }
    case Kind::Exponential:
      return std::pow(gamma_, static_cast<double>(step));
    case Kind::OneCycle:
    case Kind::ReduceOnPlateau:
      break;
  }
  return 1.0;
}

void LrScheduler::applyOneCycle(torch::optim::Optimizer& optimizer) const {
  // torch.optim.lr_scheduler.OneCycleLR, two phases.
  const double maxLr = maxLr_ * scale_;
  const double initialLr = maxLr / divFactor_;
  const double minLr = initialLr / finalDivFactor_;
  const double phaseOneEnd = pctStart_ * static_cast<double>(totalSteps_) - 1;
  const double phaseTwoEnd = static_cast<double>(totalSteps_) - 1;
  const double step = static_cast<double>(step_);
  double lr = 0;
  double momentum = 0;
  if (step <= phaseOneEnd) {
    const double pct = step / phaseOneEnd;
    lr = anneal(initialLr, maxLr, pct, cosineAnneal_);
    momentum = anneal(maxMomentum_, baseMomentum_, pct, cosineAnneal_);
  } else {
    const double pct = (step - phaseOneEnd) / (phaseTwoEnd - phaseOneEnd);
    lr = anneal(maxLr, minLr, pct, cosineAnneal_);
    momentum = anneal(baseMomentum_, maxMomentum_, pct, cosineAnneal_);
  }
  for (auto& group : optimizer.param_groups()) {
    group.options().set_lr(lr);
    if (cycleMomentum_) setMomentum(group.options(), momentum);
  }
}

void LrScheduler::addGroup(torch::optim::Optimizer& optimizer, double baseLr) {
  baseLrs_.push_back(baseLr);
  auto& group = optimizer.param_groups().back();
  // reduce_on_plateau lowers rates as it goes: a new group starts at its own; the others follow the step.
  if (kind_ == Kind::ReduceOnPlateau) return group.options().set_lr(baseLr * scale_);
  apply(optimizer);
}

void LrScheduler::apply(torch::optim::Optimizer& optimizer) const {
  if (kind_ == Kind::ReduceOnPlateau) return;
  if (kind_ == Kind::OneCycle) {
    applyOneCycle(optimizer);
    return;
  }
  const double scale = factor(step_);
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(baseLrs_[i] * scale_ * scale);
}

bool LrScheduler::improves(double value) const {
  if (maximize_) return relativeThreshold_ ? value > best_ * (threshold_ + 1.0) : value > best_ + threshold_;
  return relativeThreshold_ ? value < best_ * (1.0 - threshold_) : value < best_ - threshold_;
}

void LrScheduler::onMetric(torch::optim::Optimizer& optimizer, double value) {
  if (kind_ != Kind::ReduceOnPlateau) return;
  // torch.optim.lr_scheduler.ReduceLROnPlateau.step
  if (improves(value)) {
    best_ = value;
    badEvaluations_ = 0;
  } else {
    ++badEvaluations_;
  }
  if (cooldownLeft_ > 0) {
    --cooldownLeft_;
    badEvaluations_ = 0;
  }
  if (badEvaluations_ > patience_) {
    for (auto& group : optimizer.param_groups()) {
      const double oldLr = group.options().get_lr();
      const double newLr = std::max(oldLr * plateauFactor_, minLr_);
      if (oldLr - newLr > eps_) group.options().set_lr(newLr);
    }
    cooldownLeft_ = cooldown_;
    badEvaluations_ = 0;
  }
}

}  // namespace firebrand
