#include "core/optim/optimizer_unit.h"

#include <ATen/ATen.h>
#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>
#include <torch/serialize.h>

#include "core/compat/torch_compat.h"
#include "core/errors.h"
#include "core/optim/fused_step_support.h"
#include "core/starts_with.h"

namespace firebrand {
namespace {

bool ownedBy(const std::vector<std::string>& prefixes, const std::string& parameter) {
  if (prefixes.empty()) return true;
  for (const auto& prefix : prefixes) {
    if (startsWith(parameter, prefix)) return true;
  }
  return false;
}

int64_t bytesOf(std::initializer_list<at::Tensor> tensors) {
  int64_t bytes = 0;
  for (const auto& tensor : tensors) bytes += tensor.defined() ? static_cast<int64_t>(tensor.nbytes()) : 0;
  return bytes;
}

// The tensors of the state types makeOptimizer's optimizers keep (their fused variants keep the same).
int64_t stateTensorBytes(const torch::optim::OptimizerParamState& state) {
  using namespace torch::optim;
  if (const auto* adam = dynamic_cast<const AdamParamState*>(&state))
    return bytesOf({adam->exp_avg(), adam->exp_avg_sq(), adam->max_exp_avg_sq()});
  if (const auto* adamw = dynamic_cast<const AdamWParamState*>(&state))
    return bytesOf({adamw->exp_avg(), adamw->exp_avg_sq(), adamw->max_exp_avg_sq()});
  if (const auto* sgd = dynamic_cast<const SGDParamState*>(&state)) return bytesOf({sgd->momentum_buffer()});
  if (const auto* rmsprop = dynamic_cast<const RMSpropParamState*>(&state))
    return bytesOf({rmsprop->square_avg(), rmsprop->momentum_buffer(), rmsprop->grad_avg()});
  if (const auto* adagrad = dynamic_cast<const AdagradParamState*>(&state)) return bytesOf({adagrad->sum()});
  return 0;
}

}  // namespace

OptimizerUnit::OptimizerUnit(const OptimizerUnitSpec& spec,
                             const torch::OrderedDict<std::string, at::Tensor>& parameters,
                             const SchedulerSpec& scheduler)
    : name_(spec.name),
      optimizerName_(spec.optimizer.name),
      lossKey_(spec.loss),
      prefixes_(spec.params),
      parameters_(parameters.values()),
      optimizer_(makeOptimizer(spec.optimizer, parameters)),
      scheduler_(scheduler) {
  for (auto& group : optimizer_->param_groups()) baseLrs_.push_back(group.options().get_lr());
  // Started once here so a schedule that cannot drive this optimizer fails now; a fit restarts it.
  startSchedule(1);
}

bool OptimizerUnit::owns(const std::string& name) const { return ownedBy(prefixes_, name); }

void OptimizerUnit::addParameterGroup(const std::vector<at::Tensor>& parameters, double lr) {
  auto options = optimizer_->defaults().clone();
  options->set_lr(lr);
  optimizer_->add_param_group(torch::optim::OptimizerParamGroup(parameters, std::move(options)));
  parameters_.insert(parameters_.end(), parameters.begin(), parameters.end());
  baseLrs_.push_back(lr);
  scheduler_.addGroup(*optimizer_, lr);
}

void OptimizerUnit::zeroGrad() { compat::zeroGradToNone(*optimizer_); }

void OptimizerUnit::makeState() {
  auto* ahead = dynamic_cast<StateMadeAhead*>(optimizer_.get());
  if (ahead != nullptr) ahead->makeState(owned_ ? owned_ : [](const at::Tensor&) { return true; });
}

void OptimizerUnit::step() {
  lastStepLr_ = currentLearningRate(*optimizer_);
  if (owned_) {
    // Every optimizer skips a parameter without a gradient: its moments stay, its weights are another rank's.
    for (auto& group : optimizer_->param_groups()) {
      for (auto& parameter : group.params()) {
        if (!owned_(parameter)) parameter.mutable_grad().reset();
      }
    }
  }
  optimizer_->step();
  scheduler_.afterOptimizerStep(*optimizer_);
}

void OptimizerUnit::setBaseLearningRate(double lr) {
  if (baseLrs_.front() <= 0) {
    throw InvalidArgument("setLearningRate: optimizer" + (name_.empty() ? "" : " '" + name_ + "'") +
                          " was configured with lr 0, which a new rate cannot be in proportion to");
  }
  scheduler_.setScale(lr / baseLrs_.front(), *optimizer_);
}

std::vector<double> OptimizerUnit::learningRates() const {
  std::vector<double> rates;
  for (const auto& group : optimizer_->param_groups()) rates.push_back(group.options().get_lr());
  return rates;
}

std::vector<std::string> OptimizerUnit::learningRateNames() const {
  const std::string base = name_.empty() ? optimizerName_ : name_;
  const size_t groups = optimizer_->param_groups().size();
  if (groups == 1) return {base};
  std::vector<std::string> names;
  for (size_t i = 0; i < groups; ++i) names.push_back(base + "/pg" + std::to_string(i));
  return names;
}

void OptimizerUnit::startSchedule(int64_t totalSteps) {
  scheduler_.start(*optimizer_, baseLrs_, totalSteps);
  lastStepLr_ = currentLearningRate(*optimizer_);
}

void OptimizerUnit::saveOptimizer(const std::string& path) const {
  torch::serialize::OutputArchive archive;
  optimizer_->save(archive);
  try {
    archive.save_to(path);
  } catch (const c10::Error& error) {
    throw FileError(path + ": cannot write the optimizer state (" + error.what_without_backtrace() + ")");
  }
}

void OptimizerUnit::loadOptimizer(const std::string& path) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
    optimizer_->load(archive);
  } catch (const c10::Error& error) {
    throw FileError(path + ": the optimizer state does not fit this optimizer and model (" +
                    error.what_without_backtrace() + ")");
  }
  dropForeignState();
}

void OptimizerUnit::shardState(std::function<bool(const at::Tensor&)> owned) {
  owned_ = std::move(owned);
  dropForeignState();  // what a constructor made for every parameter (Adagrad's sums)
}

int64_t OptimizerUnit::stateBytes() const {
  int64_t bytes = 0;
  for (const auto& entry : optimizer_->state()) bytes += stateTensorBytes(*entry.second);
  return bytes;
}

std::string OptimizerUnit::stateArchive() const {
  torch::serialize::OutputArchive archive;
  optimizer_->save(archive);
  std::string bytes;
  archive.save_to([&bytes](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  return bytes;
}

void OptimizerUnit::addStateArchive(const std::string& bytes) {
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size());
  optimizer_->load(archive);
}

void OptimizerUnit::dropForeignState() {
  if (!owned_) return;
  for (const auto& group : optimizer_->param_groups()) {
    for (const auto& parameter : group.params()) {
      if (!owned_(parameter)) optimizer_->state().erase(compat::optimizerStateKey(parameter));
    }
  }
}

at::Tensor OptimizerUnit::scheduleState() const {
  std::vector<double> state = scheduler_.state();
  state.push_back(lastStepLr_);
  return at::tensor(state, at::TensorOptions().dtype(at::kDouble));
}

void OptimizerUnit::restoreSchedule(const at::Tensor& state) {
  const at::Tensor values = state.to(at::kDouble).contiguous();
  if (values.dim() != 1 || values.numel() < 1) throw InvalidArgument("schedule state: expected a list of values");
  const double* data = values.data_ptr<double>();
  scheduler_.restore(*optimizer_, std::vector<double>(data, data + values.numel() - 1));
  lastStepLr_ = data[values.numel() - 1];
}

std::vector<OptimizerUnit> makeOptimizerUnits(const std::vector<OptimizerUnitSpec>& specs,
                                              const torch::OrderedDict<std::string, at::Tensor>& parameters,
                                              const SchedulerSpec& scheduler) {
  std::vector<torch::OrderedDict<std::string, at::Tensor>> owned(specs.size());
  for (const auto& item : parameters) {
    std::vector<size_t> owners;
    for (size_t i = 0; i < specs.size(); ++i) {
      if (ownedBy(specs[i].params, item.key())) owners.push_back(i);
    }
    if (owners.empty() && specs.size() > 1) {
      throw InvalidArgument("optimizers: parameter '" + item.key() +
                            "' belongs to no optimizer; list a prefix of it "
                            "in one optimizer's params");
    }
    if (owners.size() > 1) {
      throw InvalidArgument("optimizers: parameter '" + item.key() + "' belongs to both '" + specs[owners[0]].name +
                            "' and '" + specs[owners[1]].name + "'");
    }
    if (!owners.empty()) owned[owners.front()].insert(item.key(), item.value());
  }
  std::vector<OptimizerUnit> units;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs.size() > 1 && owned[i].is_empty()) {
      throw InvalidArgument("optimizers: '" + specs[i].name + "' owns no parameter; its params prefixes match none");
    }
    units.emplace_back(specs[i], owned[i], scheduler);
  }
  return units;
}

}  // namespace firebrand
