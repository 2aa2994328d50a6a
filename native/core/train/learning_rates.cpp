// TrainingEngine's learning rates: set from JavaScript (safe while training:
// applied at the next step), read for logs and monitors.
#include <algorithm>

#include "core/errors.h"
#include "core/train/training_engine.h"

namespace firebrand {

void TrainingEngine::setLearningRate(double lr, const std::string& optimizerName) {
  if (!optimizerName.empty()) {
    const bool known =
        std::any_of(units_.begin(), units_.end(), [&](const auto& unit) { return unit.name() == optimizerName; });
    if (!known) throw InvalidArgument("setLearningRate: no optimizer is named '" + optimizerName + "'");
  }
  const std::lock_guard<std::mutex> lock(requestedLrMutex_);
  requestedLrs_.emplace_back(optimizerName, lr);
  lrRequested_ = true;
}

void TrainingEngine::applyRequestedLearningRates() {
  if (!lrRequested_) return;
  std::vector<std::pair<std::string, double>> requests;
  {
    const std::lock_guard<std::mutex> lock(requestedLrMutex_);
    requests.swap(requestedLrs_);
    lrRequested_ = false;
  }
  for (const auto& [name, lr] : requests) {
    for (auto& unit : units_) {
      if (name.empty() || unit.name() == name) unit.setBaseLearningRate(lr);
    }
  }
  publishLearningRates(learningRates());
}

std::vector<std::string> TrainingEngine::learningRateNames() const {
  std::vector<std::string> names;
  for (const auto& unit : units_) {
    const auto unitNames = unit.learningRateNames();
    names.insert(names.end(), unitNames.begin(), unitNames.end());
  }
  return names;
}

void TrainingEngine::publishLearningRates(std::vector<double> rates) {
  // Names change only when unfreezing adds a group.
  std::vector<std::string> names =
      rates.size() == publishedLrs_.size() ? std::vector<std::string>() : learningRateNames();
  const std::lock_guard<std::mutex> lock(publishedLrMutex_);
  publishedLrs_ = std::move(rates);
  if (!names.empty()) publishedLrNames_ = std::move(names);
}

std::vector<double> TrainingEngine::publishedLearningRates() const {
  const std::lock_guard<std::mutex> lock(publishedLrMutex_);
  return publishedLrs_;
}

std::vector<std::string> TrainingEngine::publishedLearningRateNames() const {
  const std::lock_guard<std::mutex> lock(publishedLrMutex_);
  return publishedLrNames_;
}

std::vector<double> TrainingEngine::learningRates() const {
  std::vector<double> rates;
  for (const auto& unit : units_) {
    const auto unitRates = unit.learningRates();
    rates.insert(rates.end(), unitRates.begin(), unitRates.end());
  }
  return rates;
}

void TrainingEngine::onEvalMetric(double value) {
  for (auto& unit : units_) unit.onMetric(value);
}

}  // namespace firebrand
