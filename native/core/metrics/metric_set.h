// Metrics asked for by name, accumulated on the device over an epoch or an
// evaluation without a host sync per step, and read back once at the end.
//   classification (class-index targets): accuracy, top<k>Accuracy,
//     precisionMacro, recallMacro, f1Macro, precisionMicro, recallMicro,
//     f1Micro, precisionWeighted, recallWeighted, f1Weighted (macro and weighted:
//     over the classes present in targets or predictions, weighted by their
//     support, as scikit-learn), classificationReport (each class's precision,
//     recall, F1 and support), confusionMatrix (rows: true class, columns: predicted)
//   regression: mse, mae, r2 (over all target elements)
//   any loss: perplexity (exp of the mean loss)
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <map>
#include <string>
#include <vector>

namespace firebrand {

struct MetricValues {
  std::map<std::string, double> scalars;
  at::Tensor confusionMatrix;  // int64 [C, C] on the CPU, when asked for
  at::Tensor classReport;      // float64 [4, C] on the CPU (precision, recall, F1, support), when asked for
};

class MetricSet {
 public:
  // Names as src/training/metrics.ts checked them against the loss; `ignoreIndex` targets are left out.
  MetricSet(const std::vector<std::string>& names, bool classIndexTargets, int64_t ignoreIndex);

  // Starts a new accumulation on `device`.
  void reset(const c10::Device& device);
  // One batch: model outputs and targets as the loss saw them.
  void update(const at::Tensor& output, const at::Tensor& targets);
  // The running sums (counts, confusion cells, error sums), sharing storage
  // with the set: summing them in place across ranks gives the global metrics.
  std::vector<at::Tensor> runningSums() const;
  // A copy whose running sums are its own (a plain copy shares them).
  MetricSet snapshot() const;
  // `meanLoss` is the loss over the same samples (for perplexity).
  MetricValues compute(double meanLoss) const;

 private:
  // The class-index sums: correct samples, per-class counts, the confusion matrix, top-k.
  void updateClassification(const at::Tensor& output, const at::Tensor& targets);

  std::vector<std::string> names_;
  bool classIndexTargets_;
  int64_t ignoreIndex_;
  std::vector<int64_t> topK_;          // k of each top<k>Accuracy asked for
  bool classification_ = false;        // any class-index metric: counts correct samples
  bool needsClassCounts_ = false;      // a macro or weighted average, or the report: per-class counts
  bool needsConfusionMatrix_ = false;  // confusionMatrix: the whole [C, C] matrix
  bool needsRegression_ = false;
  c10::Device device_{c10::kCPU};
  int64_t classes_ = 0;     // of the latest batch; 0 before the first
  at::Tensor correct_;      // samples whose argmax is their target
  at::Tensor classCounts_;  // [3, C] int64: true positives, targets and predictions per class
  at::Tensor confusion_;    // [C * C] int64, allocated at the first batch
  std::vector<at::Tensor> topKCorrect_;
  at::Tensor counted_;     // samples (classification) or elements (regression)
  at::Tensor regression_;  // [5] float64: sum sq err, sum abs err, sum y, sum y^2, unused
};

}  // namespace firebrand
