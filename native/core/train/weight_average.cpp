#include "core/train/weight_average.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "core/shape_text.h"

namespace firebrand {

WeightAverage::WeightAverage(const Model& model, const WeightAverageOptions& options) : options_(options) {
  torch::NoGradGuard noGrad;
  for (const auto& named : {model.namedParameters(), model.namedBuffers()}) {
    for (const auto& item : named) {
      names_.push_back(item.key());
      values_.push_back(item.value());
      averages_.push_back(item.value().detach().clone());
    }
  }
}

double WeightAverage::decayAt(int64_t update) const {
  // timm's ModelEmaV3.get_decay (update_after_step 0, warmup_gamma 1, warmup_power 2/3, min_decay 0).
  const int64_t step = std::max<int64_t>(0, update - 1);
  if (step <= 0) return 0.0;
  if (!options_.warmup) return options_.decay;
  return std::max(std::min(1.0 - std::pow(1.0 + static_cast<double>(step), -2.0 / 3.0), options_.decay), 0.0);
}

void WeightAverage::update(int64_t update) {
  torch::NoGradGuard noGrad;
  const double weight = 1.0 - decayAt(update);
  for (size_t i = 0; i < values_.size(); ++i) {
    if (averages_[i].is_floating_point())
      averages_[i].lerp_(values_[i], weight);
    else
      averages_[i].copy_(values_[i]);
  }
}

void WeightAverage::swapWithModel() {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < values_.size(); ++i) {
    const at::Tensor held = values_[i].clone();
    values_[i].copy_(averages_[i]);
    averages_[i].copy_(held);
  }
}

void WeightAverage::copyToModel() {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < values_.size(); ++i) values_[i].copy_(averages_[i]);
}

TensorDict WeightAverage::state() const {
  TensorDict state;
  for (size_t i = 0; i < names_.size(); ++i) state[names_[i]] = averages_[i].detach().to(at::kCPU).clone();
  return state;
}

void WeightAverage::restore(const TensorDict& state, const std::string& origin) {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < names_.size(); ++i) {
    const auto it = state.find(names_[i]);
    if (it == state.end()) throw FileError(origin + ": the averaged weights lack '" + names_[i] + "'");
    if (!it->second.sizes().equals(averages_[i].sizes())) {
      throw FileError(origin + ": averaged weight '" + names_[i] + "' has shape " + shapeText(it->second) +
                      " but the model's is " + shapeText(averages_[i]));
    }
    averages_[i].copy_(it->second);
  }
}

}  // namespace firebrand
