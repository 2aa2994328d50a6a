#include "core/train/learning_rate_control.h"

#include <algorithm>

#include "core/errors.h"

namespace firebrand {

void LearningRateControl::request(double lr, const std::string& optimizerName) {
  if (!optimizerName.empty()) {
    const bool known =
        std::any_of(units_.begin(), units_.end(), [&](const auto& unit) { return unit.name() == optimizerName; });
    if (!known) throw InvalidArgument("setLearningRate: no optimizer is named '" + optimizerName + "'");
  }
  const std::lock_guard<std::mutex> lock(requestMutex_);
  requests_.emplace_back(optimizerName, lr);
  requested_ = true;
}

void LearningRateControl::applyRequested() {
  if (!requested_) return;
  std::vector<std::pair<std::string, double>> requests;
  {
    const std::lock_guard<std::mutex> lock(requestMutex_);
    requests.swap(requests_);
    requested_ = false;
  }
  for (const auto& [name, lr] : requests) {
    for (auto& unit : units_) {
      if (name.empty() || unit.name() == name) unit.setBaseLearningRate(lr);
    }
  }
  publish();
}

std::vector<double> LearningRateControl::current() const {
  std::vector<double> rates;
  for (const auto& unit : units_) {
    const auto unitRates = unit.learningRates();
    rates.insert(rates.end(), unitRates.begin(), unitRates.end());
  }
  return rates;
}

std::vector<std::string> LearningRateControl::names() const {
  std::vector<std::string> names;
  for (const auto& unit : units_) {
    const auto unitNames = unit.learningRateNames();
    names.insert(names.end(), unitNames.begin(), unitNames.end());
  }
  return names;
}

void LearningRateControl::publish(std::vector<double> rates) {
  // Names change only when unfreezing adds a group.
  std::vector<std::string> named = rates.size() == published_.size() ? std::vector<std::string>() : names();
  const std::lock_guard<std::mutex> lock(publishedMutex_);
  published_ = std::move(rates);
  if (!named.empty()) publishedNames_ = std::move(named);
}

std::vector<double> LearningRateControl::published() const {
  const std::lock_guard<std::mutex> lock(publishedMutex_);
  return published_;
}

std::vector<std::string> LearningRateControl::publishedNames() const {
  const std::lock_guard<std::mutex> lock(publishedMutex_);
  return publishedNames_;
}

}  // namespace firebrand
