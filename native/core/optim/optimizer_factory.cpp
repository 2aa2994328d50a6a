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
#include "core/options/resolved_options.h"

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

std::unique_ptr<torch::optim::Optimizer> makeSgd(ResolvedOptions& options, std::vector<ParameterGroupPlan> plans) {
  const auto defaults = torch::optim::SGDOptions(options.number("lr"))
                            .momentum(options.number("momentum"))
                            .dampening(options.number("dampening"))
                            .weight_decay(options.number("weightDecay"))
                            .nesterov(options.flag("nesterov"));
  if (options.flag("fused")) return build<FusedSgd>(defaults, std::move(plans));
  return build<torch::optim::SGD>(defaults, std::move(plans));
}

template <typename Optimizer, typename FusedOptimizer, typename Options>
std::unique_ptr<torch::optim::Optimizer> makeAdamFamily(ResolvedOptions& options,
                                                        std::vector<ParameterGroupPlan> plans) {
  const auto betas = options.numbers("betas");
  const auto defaults = Options(options.number("lr"))
                            .betas({betas.at(0), betas.at(1)})
                            .eps(options.number("eps"))
                            .weight_decay(options.number("weightDecay"))
                            .amsgrad(options.flag("amsgrad"));
  if (options.flag("fused")) return build<FusedOptimizer>(defaults, std::move(plans));
  return build<Optimizer>(defaults, std::move(plans));
}

std::unique_ptr<torch::optim::Optimizer> makeRmsprop(ResolvedOptions& options, std::vector<ParameterGroupPlan> plans) {
  const auto defaults = torch::optim::RMSpropOptions(options.number("lr"))
                            .alpha(options.number("alpha"))
                            .eps(options.number("eps"))
                            .weight_decay(options.number("weightDecay"))
                            .momentum(options.number("momentum"))
                            .centered(options.flag("centered"));
  return build<torch::optim::RMSprop>(defaults, std::move(plans));
}

std::unique_ptr<torch::optim::Optimizer> makeAdagrad(ResolvedOptions& options, std::vector<ParameterGroupPlan> plans) {
  const auto defaults = torch::optim::AdagradOptions(options.number("lr"))
                            .lr_decay(options.number("lrDecay"))
                            .weight_decay(options.number("weightDecay"))
                            .initial_accumulator_value(options.number("initialAccumulatorValue"))
                            .eps(options.number("eps"));
  return build<torch::optim::Adagrad>(defaults, std::move(plans));
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
  ResolvedOptions options("optimizer (" + spec.name + ")", spec.options);
  auto plans = planParameterGroups(named, spec.paramGroups, options.flag("noDecayOnBiasAndNorm"));
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (spec.name == "sgd") {
    optimizer = makeSgd(options, std::move(plans));
  } else if (spec.name == "adam") {
    optimizer = makeAdamFamily<torch::optim::Adam, FusedAdam, torch::optim::AdamOptions>(options, std::move(plans));
  } else if (spec.name == "adamw") {
    optimizer = makeAdamFamily<torch::optim::AdamW, FusedAdamW, torch::optim::AdamWOptions>(options, std::move(plans));
  } else if (spec.name == "rmsprop") {
    optimizer = makeRmsprop(options, std::move(plans));
  } else if (spec.name == "adagrad") {
    optimizer = makeAdagrad(options, std::move(plans));
  } else {
    throw InvalidState("firebrand bug: optimizer '" + spec.name + "' reached C++ unresolved");
  }
  options.finish();
  return optimizer;
}

double currentLearningRate(torch::optim::Optimizer& optimizer) {
  auto& groups = optimizer.param_groups();
  return groups.empty() ? 0.0 : groups.front().options().get_lr();
}

}  // namespace firebrand
