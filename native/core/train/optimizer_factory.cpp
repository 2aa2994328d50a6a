#include "core/train/optimizer_factory.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <limits>

#include "core/errors.h"
#include "core/options/option_reader.h"

namespace firebrand {
namespace {

constexpr double kMax = std::numeric_limits<double>::max();

std::unique_ptr<torch::optim::Optimizer> makeSgd(OptionReader& options, std::vector<at::Tensor> parameters) {
  const double lr = options.number("lr", 1e-3, 0, kMax);
  const double momentum = options.number("momentum", 0, 0, kMax);
  const double dampening = options.number("dampening", 0, 0, kMax);
  const double weightDecay = options.number("weightDecay", 0, 0, kMax);
  const bool nesterov = options.flag("nesterov", false);
  if (nesterov && (momentum <= 0 || dampening != 0)) {
    throw InvalidArgument(options.owner() + ": nesterov needs momentum > 0 and dampening 0, got momentum " +
                          formatNumber(momentum) + " and dampening " + formatNumber(dampening));
  }
  return std::make_unique<torch::optim::SGD>(std::move(parameters), torch::optim::SGDOptions(lr)
                                                                        .momentum(momentum)
                                                                        .dampening(dampening)
                                                                        .weight_decay(weightDecay)
                                                                        .nesterov(nesterov));
}

template <typename Optimizer, typename Options>
std::unique_ptr<torch::optim::Optimizer> makeAdamFamily(OptionReader& options, std::vector<at::Tensor> parameters,
                                                        double defaultWeightDecay) {
  const double lr = options.number("lr", 1e-3, 0, kMax);
  const auto betas = options.numbers("betas", 2, {0.9, 0.999}, 0, 0.999999999);
  const double eps = options.number("eps", 1e-8, 0, kMax);
  const double weightDecay = options.number("weightDecay", defaultWeightDecay, 0, kMax);
  const bool amsgrad = options.flag("amsgrad", false);
  return std::make_unique<Optimizer>(std::move(parameters), Options(lr)
                                                                .betas({betas[0], betas[1]})
                                                                .eps(eps)
                                                                .weight_decay(weightDecay)
                                                                .amsgrad(amsgrad));
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const std::string& name, const OptionMap& optionMap,
                                                       std::vector<at::Tensor> parameters) {
  OptionReader options("optimizer (" + name + ")", optionMap);
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (name == "sgd") {
    optimizer = makeSgd(options, std::move(parameters));
  } else if (name == "adam") {
    optimizer = makeAdamFamily<torch::optim::Adam, torch::optim::AdamOptions>(options, std::move(parameters), 0.0);
  } else if (name == "adamw") {
    optimizer = makeAdamFamily<torch::optim::AdamW, torch::optim::AdamWOptions>(options, std::move(parameters), 1e-2);
  } else {
    std::string message = "optimizer: unknown optimizer '" + name + "'";
    const std::string suggestion = closestMatch(name, {"sgd", "adam", "adamw"});
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    throw InvalidArgument(message + "; known optimizers: sgd, adam, adamw");
  }
  options.finish();
  return optimizer;
}

double currentLearningRate(torch::optim::Optimizer& optimizer) {
  return optimizer.param_groups().at(0).options().get_lr();
}

}  // namespace firebrand
