#include "core/optim/optimizer_factory.h"

#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <limits>

#include "core/errors.h"
#include "core/optim/fused_adam.h"
#include "core/optim/fused_sgd.h"
#include "core/options/option_reader.h"

namespace firebrand {
namespace {


// One libtorch parameter group per plan, each with a copy of the defaults
// that takes the plan's lr and weight decay.
// Each group's options are set again once the optimizer is built: libtorch
// 2.14 merges a group's options with the defaults, taking the default for any
// field equal to its constructor's (a group lr of 1e-3, Adam's default, became
// the optimizer's lr); 1.13 keeps them as given.
template <typename Optimizer, typename Options>
std::unique_ptr<torch::optim::Optimizer> build(const Options& defaults, std::vector<ParameterGroupPlan> plans) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  std::vector<Options> groupOptions;
  for (auto& plan : plans) {
    Options options = defaults;
    if (plan.lr) options.lr(*plan.lr);
    if (plan.weightDecay) options.weight_decay(*plan.weightDecay);
    groupOptions.push_back(options);
    groups.emplace_back(std::move(plan.parameters), std::make_unique<Options>(options));
  }
  auto optimizer = std::make_unique<Optimizer>(std::move(groups), defaults);
  for (size_t i = 0; i < groupOptions.size(); ++i) {
    optimizer->param_groups()[i].set_options(std::make_unique<Options>(groupOptions[i]));
  }
  return optimizer;
}

std::unique_ptr<torch::optim::Optimizer> makeSgd(OptionReader& options, std::vector<ParameterGroupPlan> plans) {
  const double lr = options.number("lr", 1e-3, 0, kUnbounded);
  const double momentum = options.number("momentum", 0, 0, kUnbounded);
  const double dampening = options.number("dampening", 0, 0, kUnbounded);
  const double weightDecay = options.number("weightDecay", 0, 0, kUnbounded);
  const bool nesterov = options.flag("nesterov", false);
  const bool fused = options.flag("fused", true);
  if (nesterov && (momentum <= 0 || dampening != 0)) {
    throw InvalidArgument(options.owner() + ": nesterov needs momentum > 0 and dampening 0, got momentum " +
                          formatNumber(momentum) + " and dampening " + formatNumber(dampening));
  }
  const auto defaults =
      torch::optim::SGDOptions(lr).momentum(momentum).dampening(dampening).weight_decay(weightDecay).nesterov(nesterov);
  if (fused) return build<FusedSgd>(defaults, std::move(plans));
  return build<torch::optim::SGD>(defaults, std::move(plans));
}

template <typename Optimizer, typename FusedOptimizer, typename Options>
std::unique_ptr<torch::optim::Optimizer> makeAdamFamily(OptionReader& options, std::vector<ParameterGroupPlan> plans,
                                                        double defaultWeightDecay) {
  const double lr = options.number("lr", 1e-3, 0, kUnbounded);
  const auto betas = options.numbers("betas", 2, {0.9, 0.999}, 0, 0.999999999);
  const double eps = options.number("eps", 1e-8, 0, kUnbounded);
  const double weightDecay = options.number("weightDecay", defaultWeightDecay, 0, kUnbounded);
  const bool amsgrad = options.flag("amsgrad", false);
  const bool fused = options.flag("fused", true);
  const auto defaults = Options(lr).betas({betas[0], betas[1]}).eps(eps).weight_decay(weightDecay).amsgrad(amsgrad);
  if (fused) return build<FusedOptimizer>(defaults, std::move(plans));
  return build<Optimizer>(defaults, std::move(plans));
}

std::unique_ptr<torch::optim::Optimizer> makeRmsprop(OptionReader& options, std::vector<ParameterGroupPlan> plans) {
  const auto defaults = torch::optim::RMSpropOptions(options.number("lr", 1e-2, 0, kUnbounded))
                            .alpha(options.number("alpha", 0.99, 0, 1))
                            .eps(options.number("eps", 1e-8, 0, kUnbounded))
                            .weight_decay(options.number("weightDecay", 0, 0, kUnbounded))
                            .momentum(options.number("momentum", 0, 0, kUnbounded))
                            .centered(options.flag("centered", false));
  return build<torch::optim::RMSprop>(defaults, std::move(plans));
}

std::unique_ptr<torch::optim::Optimizer> makeAdagrad(OptionReader& options, std::vector<ParameterGroupPlan> plans) {
  const auto defaults = torch::optim::AdagradOptions(options.number("lr", 1e-2, 0, kUnbounded))
                            .lr_decay(options.number("lrDecay", 0, 0, kUnbounded))
                            .weight_decay(options.number("weightDecay", 0, 0, kUnbounded))
                            .initial_accumulator_value(options.number("initialAccumulatorValue", 0, 0, kUnbounded))
                            .eps(options.number("eps", 1e-10, 0, kUnbounded));
  return build<torch::optim::Adagrad>(defaults, std::move(plans));
}

const std::vector<std::string>& knownOptimizers() {
  static const std::vector<std::string> names = {"sgd", "adam", "adamw", "rmsprop", "adagrad"};
  return names;
}

}  // namespace

std::vector<std::string> fusedOptimizers() {
  std::vector<std::string> names = {"sgd"};  // its update needs only the add kernel's rounding, always known
  if (FusedAdam::fusesFor(at::kFloat)) names.push_back("adam");
  if (FusedAdamW::fusesFor(at::kFloat)) names.push_back("adamw");
  return names;
}

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const OptimizerSpec& spec,
                                                       const torch::OrderedDict<std::string, at::Tensor>& named) {
  OptionReader options("optimizer (" + spec.name + ")", spec.options);
  auto plans = planParameterGroups(named, spec.paramGroups, options.flag("noDecayOnBiasAndNorm", false));
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (spec.name == "sgd") {
    optimizer = makeSgd(options, std::move(plans));
  } else if (spec.name == "adam") {
    optimizer = makeAdamFamily<torch::optim::Adam, FusedAdam, torch::optim::AdamOptions>(options, std::move(plans), 0.0);
  } else if (spec.name == "adamw") {
    optimizer = makeAdamFamily<torch::optim::AdamW, FusedAdamW, torch::optim::AdamWOptions>(options, std::move(plans), 1e-2);
  } else if (spec.name == "rmsprop") {
    optimizer = makeRmsprop(options, std::move(plans));
  } else if (spec.name == "adagrad") {
    optimizer = makeAdagrad(options, std::move(plans));
  } else {
    std::string message = "optimizer: unknown optimizer '" + spec.name + "'";
    const std::string suggestion = closestMatch(spec.name, knownOptimizers());
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    throw InvalidArgument(message + "; known optimizers: sgd, adam, adamw, rmsprop, adagrad");
  }
  options.finish();
  return optimizer;
}

double currentLearningRate(torch::optim::Optimizer& optimizer) {
  auto& groups = optimizer.param_groups();
  return groups.empty() ? 0.0 : groups.front().options().get_lr();
}

}  // namespace firebrand
