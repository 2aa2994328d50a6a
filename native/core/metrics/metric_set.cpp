#include "core/metrics/metric_set.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "core/class_rows.h"
#include "core/errors.h"

namespace firebrand {
namespace {

const std::vector<std::string>& classificationNames() {
  static const std::vector<std::string> names = {
      "accuracy", "precisionMacro",    "recallMacro",    "f1Macro",    "precisionMicro",       "recallMicro",
      "f1Micro",  "precisionWeighted", "recallWeighted", "f1Weighted", "classificationReport", "confusionMatrix"};
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

// Each class's precision, recall, F1 and support (rows) from its true positives, targets and predictions
// ([3, C] counts); 0 where a ratio has nothing to divide by (scikit-learn's zero_division=0).
at::Tensor classReport(const at::Tensor& counts) {
  const int64_t classes = counts.size(1);
  at::Tensor report = at::zeros({4, classes}, at::kDouble);
  auto cells = report.accessor<double, 2>();
  const auto count = counts.accessor<double, 2>();
  for (int64_t c = 0; c < classes; ++c) {
    const double precision = ratio(count[0][c], count[2][c]);
    const double recall = ratio(count[0][c], count[1][c]);
    cells[0][c] = precision;
    cells[1][c] = recall;
    cells[2][c] = ratio(2 * precision * recall, precision + recall);
    cells[3][c] = count[1][c];
  }
  return report;
}

// Macro (a plain mean) and weighted (by support) averages over the classes present in targets or
// predictions (`counts` [3, C]: true positives, targets, predictions), as scikit-learn's
// precision_recall_fscore_support(average='macro' | 'weighted').
void addAverages(const at::Tensor& counts, const at::Tensor& report, std::map<std::string, double>& into) {
  const auto cells = report.accessor<double, 2>();
  const auto count = counts.accessor<double, 2>();
  const char* names[] = {"precision", "recall", "f1"};
  double macro[3] = {0, 0, 0}, weighted[3] = {0, 0, 0}, support = 0;
  int64_t present = 0;
  for (int64_t c = 0; c < report.size(1); ++c) {
    if (count[1][c] == 0 && count[2][c] == 0) continue;
    for (int m = 0; m < 3; ++m) {
      macro[m] += cells[m][c];
      weighted[m] += cells[m][c] * cells[3][c];
    }
    support += cells[3][c];
    ++present;
  }
  for (int m = 0; m < 3; ++m) {
    into[std::string(names[m]) + "Macro"] = ratio(macro[m], static_cast<double>(present));
    into[std::string(names[m]) + "Weighted"] = ratio(weighted[m], support);
  }
}

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
    classification_ = classification_ || classification;
    if (isTopK) {
      topK_.push_back(std::stoll(match[1]));
    } else if (name == "confusionMatrix") {
      needsConfusionMatrix_ = true;
    } else if (name.find("Macro") != std::string::npos || name.find("Weighted") != std::string::npos ||
               name == "classificationReport") {
      needsClassCounts_ = true;
    } else if (classification) {
      // accuracy and the micro averages: the count of correct samples
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
  classCounts_ = at::Tensor();
  const auto longs = at::TensorOptions().dtype(at::kLong).device(device);
  correct_ = at::zeros({}, longs);
  topKCorrect_.assign(topK_.size(), at::Tensor());
  for (auto& correct : topKCorrect_) correct = at::zeros({}, longs);
  counted_ = at::zeros({}, longs);
  regression_ = at::zeros({4}, at::TensorOptions().dtype(at::kDouble).device(device));
}

void MetricSet::updateClassification(const at::Tensor& output, const at::Tensor& rawTargets) {
  const auto [scores, targets] = classRows(output, rawTargets);
  const int64_t classes = scores.size(1);
  const auto longs = at::TensorOptions().dtype(at::kLong).device(device_);
  classes_ = classes;
  const at::Tensor valid = targets.ne(ignoreIndex_);
  const at::Tensor predicted = scores.argmax(1);
  correct_.add_(predicted.eq(targets).logical_and(valid).sum());
  // Per-class counts (O(classes)) for the macro averages; the whole [C, C] matrix only when asked for,
  // since a language model's classes are its vocabulary.
  if (needsClassCounts_) {
    if (!classCounts_.defined()) classCounts_ = at::zeros({3, classes}, longs);
    const at::Tensor actual = targets.masked_select(valid);
    const at::Tensor guessed = predicted.masked_select(valid);
    classCounts_[0].add_(at::bincount(actual.masked_select(guessed.eq(actual)), {}, classes));
    classCounts_[1].add_(at::bincount(actual, {}, classes));
    classCounts_[2].add_(at::bincount(guessed, {}, classes));
  }
  if (needsConfusionMatrix_) {
    if (!confusion_.defined()) confusion_ = at::zeros({classes * classes}, longs);
    const at::Tensor cells = (targets * classes + predicted).masked_select(valid);
    confusion_.add_(at::bincount(cells, {}, classes * classes));
  }
  for (size_t i = 0; i < topK_.size(); ++i) {
    const at::Tensor best = std::get<1>(scores.topk(std::min(topK_[i], classes), 1));
    topKCorrect_[i].add_(best.eq(targets.unsqueeze(1)).any(1).logical_and(valid).sum());
  }
  counted_.add_(valid.sum());
}

void MetricSet::update(const at::Tensor& output, const at::Tensor& targets) {
  if (classification_) updateClassification(output, targets);
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
  if (classification_) sums.push_back(correct_);
  if (needsRegression_) sums.push_back(regression_);
  if (needsClassCounts_) sums.push_back(classCounts_);
  if (needsConfusionMatrix_) sums.push_back(confusion_);
  return sums;
}

MetricSet MetricSet::snapshot() const {
  MetricSet copy = *this;
  const auto own = [](const at::Tensor& sum) { return sum.defined() ? sum.clone() : sum; };
  copy.confusion_ = own(confusion_);
  copy.classCounts_ = own(classCounts_);
  copy.correct_ = own(correct_);
  for (auto& correct : copy.topKCorrect_) correct = own(correct);
  copy.counted_ = own(counted_);
  copy.regression_ = own(regression_);
  return copy;
}

MetricValues MetricSet::compute(double meanLoss) const {
  MetricValues values;
  const double counted = counted_.defined() ? static_cast<double>(counted_.item<int64_t>()) : 0.0;
  if (classes_ > 0) {
    // Single-label classification: micro precision, recall and F1 all equal accuracy.
    const double accuracy = ratio(static_cast<double>(correct_.item<int64_t>()), counted);
    std::map<std::string, double> classification = {
        {"accuracy", accuracy}, {"precisionMicro", accuracy}, {"recallMicro", accuracy}, {"f1Micro", accuracy}};
    if (classCounts_.defined()) {
      const at::Tensor counts = classCounts_.to(at::kCPU).to(at::kDouble);
      const at::Tensor report = classReport(counts);
      addAverages(counts, report, classification);
      if (contains(names_, "classificationReport")) values.classReport = report;
    }
    for (const auto& name : names_) {
      const auto it = classification.find(name);
      if (it != classification.end()) values.scalars[name] = it->second;
    }
    if (confusion_.defined()) values.confusionMatrix = confusion_.view({classes_, classes_}).to(at::kCPU);
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
