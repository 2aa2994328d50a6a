#include "core/metrics/metric_set.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "core/errors.h"

namespace firebrand {
namespace {

const std::vector<std::string>& classificationNames() {
  static const std::vector<std::string> names = {"accuracy",       "precisionMacro", "recallMacro", "f1Macro",
                                                 "precisionMicro", "recallMicro",    "f1Micro",     "confusionMatrix"};
  return names;
}

const std::vector<std::string>& regressionNames() {
  static const std::vector<std::string> names = {"mse", "mae", "r2"};
  return names;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

double ratio(double numerator, double denominator) { return denominator > 0 ? numerator / denominator : 0.0; }

}  // namespace

MetricSet::MetricSet(const std::vector<std::string>& names, bool classIndexTargets, int64_t ignoreIndex)
    : classIndexTargets_(classIndexTargets), ignoreIndex_(ignoreIndex) {
  static const std::regex topK("top([1-9][0-9]*)Accuracy");
  for (const auto& name : names) {
    if (contains(names_, name)) continue;
    std::smatch match;
    const bool isTopK = std::regex_match(name, match, topK);
    const bool classification = isTopK || contains(classificationNames(), name);
    // src/training/metrics.ts checked the names against the loss.
    if (classification != classIndexTargets && (classification || contains(regressionNames(), name))) {
      throw InvalidState("firebrand bug: metric '" + name + "' reached C++ for a loss it does not fit");
    }
    if (isTopK) {
      topK_.push_back(std::stoll(match[1]));
    } else if (classification) {
      needsConfusion_ = true;
    } else if (contains(regressionNames(), name)) {
      needsRegression_ = true;
    } else if (name != "perplexity") {
      throw InvalidState("firebrand bug: metric '" + name + "' reached C++ unchecked");
    }
    names_.push_back(name);
  }
}

void MetricSet::reset(const c10::Device& device) {
  device_ = device;
  classes_ = 0;
  confusion_ = at::Tensor();
  const auto longs = at::TensorOptions().dtype(at::kLong).device(device);
  topKCorrect_.assign(topK_.size(), at::Tensor());
  for (auto& correct : topKCorrect_) correct = at::zeros({}, longs);
  counted_ = at::zeros({}, longs);
  regression_ = at::zeros({4}, at::TensorOptions().dtype(at::kDouble).device(device));
}

void MetricSet::update(const at::Tensor& output, const at::Tensor& targets) {
  if (needsConfusion_ || !topK_.empty()) {
    const int64_t classes = output.size(1);
    const at::Tensor valid = targets.ne(ignoreIndex_);
    if (needsConfusion_) {
      if (!confusion_.defined()) {
        classes_ = classes;
        confusion_ = at::zeros({classes * classes}, at::TensorOptions().dtype(at::kLong).device(device_));
      }
      const at::Tensor cells = (targets * classes + output.argmax(1)).masked_select(valid);
      confusion_.add_(at::bincount(cells, {}, classes * classes));
    }
    for (size_t i = 0; i < topK_.size(); ++i) {
      const at::Tensor best = std::get<1>(output.topk(std::min(topK_[i], classes), 1));
      topKCorrect_[i].add_(best.eq(targets.unsqueeze(1)).any(1).logical_and(valid).sum());
    }
    counted_.add_(valid.sum());
  }
  if (needsRegression_) {
    const at::Tensor predicted = output.to(at::kDouble);
    const at::Tensor actual = targets.to(at::kDouble).reshape_as(predicted);
    const at::Tensor error = predicted - actual;
    regression_.add_(at::stack({error.square().sum(), error.abs().sum(), actual.sum(), actual.square().sum()}));
    counted_.add_(predicted.numel());
  }
}

std::vector<at::Tensor> MetricSet::runningSums() const {
  std::vector<at::Tensor> sums = topKCorrect_;
  sums.push_back(counted_);
  if (needsRegression_) sums.push_back(regression_);
  if (needsConfusion_) sums.push_back(confusion_);
  return sums;
}

MetricSet MetricSet::snapshot() const {
  MetricSet copy = *this;
  const auto own = [](const at::Tensor& sum) { return sum.defined() ? sum.clone() : sum; };
  copy.confusion_ = own(confusion_);
  for (auto& correct : copy.topKCorrect_) correct = own(correct);
  copy.counted_ = own(counted_);
  copy.regression_ = own(regression_);
  return copy;
}

MetricValues MetricSet::compute(double meanLoss) const {
  MetricValues values;
  const double counted = counted_.defined() ? static_cast<double>(counted_.item<int64_t>()) : 0.0;
  if (needsConfusion_ && confusion_.defined()) {
    const at::Tensor matrix = confusion_.view({classes_, classes_}).to(at::kCPU);
    const at::Tensor truePositives = matrix.diagonal().to(at::kDouble);
    const at::Tensor actual = matrix.sum(1).to(at::kDouble);
    const at::Tensor predicted = matrix.sum(0).to(at::kDouble);
    const double total = actual.sum().item<double>();
    const double accuracy = ratio(truePositives.sum().item<double>(), total);
    // Single-label classification: micro precision, recall and F1 all equal accuracy.
    double precisionSum = 0, recallSum = 0, f1Sum = 0;
    int64_t present = 0;
    for (int64_t c = 0; c < classes_; ++c) {
      const double tp = truePositives[c].item<double>();
      const double inTargets = actual[c].item<double>();
      const double inPredictions = predicted[c].item<double>();
      if (inTargets == 0 && inPredictions == 0) continue;
      const double precision = ratio(tp, inPredictions);
      const double recall = ratio(tp, inTargets);
      precisionSum += precision;
      recallSum += recall;
      f1Sum += ratio(2 * precision * recall, precision + recall);
      ++present;
    }
    const std::map<std::string, double> classification = {
        {"accuracy", accuracy},
        {"precisionMicro", accuracy},
        {"recallMicro", accuracy},
        {"f1Micro", accuracy},
        {"precisionMacro", ratio(precisionSum, static_cast<double>(present))},
        {"recallMacro", ratio(recallSum, static_cast<double>(present))},
        {"f1Macro", ratio(f1Sum, static_cast<double>(present))}};
    for (const auto& name : names_) {
      const auto it = classification.find(name);
      if (it != classification.end()) values.scalars[name] = it->second;
    }
    if (contains(names_, "confusionMatrix")) values.confusionMatrix = matrix;
  }
  for (size_t i = 0; i < topK_.size(); ++i) {
    values.scalars["top" + std::to_string(topK_[i]) + "Accuracy"] =
        ratio(static_cast<double>(topKCorrect_[i].item<int64_t>()), counted);
  }
  if (needsRegression_) {
    const at::Tensor sums = regression_.to(at::kCPU);
    const double squared = sums[0].item<double>(), absolute = sums[1].item<double>();
    const double total = sums[2].item<double>(), totalSquares = sums[3].item<double>();
    const double variance = totalSquares - total * total / std::max(counted, 1.0);
    const std::map<std::string, double> regression = {
        {"mse", ratio(squared, counted)},
        {"mae", ratio(absolute, counted)},
        // scikit-learn's r2_score: 1 for a perfect fit of constant targets, else 0 then.
        {"r2", variance > 0 ? 1.0 - squared / variance : (squared == 0 ? 1.0 : 0.0)}};
    for (const auto& name : names_) {
      const auto it = regression.find(name);
      if (it != regression.end()) values.scalars[name] = it->second;
    }
  }
  if (contains(names_, "perplexity")) values.scalars["perplexity"] = std::exp(meanLoss);
  return values;
}

}  // namespace firebrand
