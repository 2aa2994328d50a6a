// Losses chosen by PyTorch's functional name, with their options checked.
// Shapes of model output and targets are checked before the loss runs, so a
// mismatch names both shapes instead of broadcasting silently.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <string>
#include <vector>

#include "core/options/option_value.h"

namespace firebrand {

class LossFunction {
 public:
  // `options` as objective-schemas.ts resolved them: every field given.
  LossFunction(const std::string& name, const OptionMap& options);

  at::Tensor operator()(const at::Tensor& output, const at::Tensor& targets) const;
  // Class-index losses count their targets: their mean divides their sum by countedTargets, the targets
  // that are not ignoreIndex (or those targets' class weights summed). Accumulation divides the sums of a
  // group's micro-batches by the group's count, as one batch of them would (transformers'
  // num_items_in_batch). Other losses' mean is over every element.
  bool countsTargets() const { return kind_ == Kind::CrossEntropy || kind_ == Kind::Nll; }
  double countedTargets(const at::Tensor& targets) const;
  // A counting loss's sum over its counted targets (reduction 'sum').
  at::Tensor summed(const at::Tensor& output, const at::Tensor& targets) const;

  // Moves option tensors (class weights, pos_weight) to the training device.
  void to(const c10::Device& device);
  // Class-index losses: accuracy is a meaningful metric.
  bool takesClassIndices() const { return takesClassIndices_; }
  // Targets in the dtype the loss needs; checked once per dataset, not per step.
  at::Tensor prepareTargets(const at::Tensor& targets) const;
  // Throws naming the first label outside [0, classes) (ignoreIndex excepted).
  // `sampleIndices` (when known) names a bad label's sample by its dataset index.
  void checkLabelRange(const at::Tensor& targets, int64_t classes, c10::ArrayRef<int64_t> sampleIndices = {}) const;
  // Class-index losses: throws when `output` holds its classes last ([N, d, C], nanoGPT's logits)
  // against targets [N, d], where PyTorch's layout is [N, C, d]; once per dataset, before
  // checkLabelRange, which would blame the labels.
  void checkClassDimension(const at::Tensor& output, const at::Tensor& targets) const;
  // weight: 'balanced' (scikit-learn's compute_class_weight): the weights come from fit's training
  // targets, samples / (classes × each class's count), set by balanceClasses before the first step.
  bool balancesClasses() const { return balanced_; }
  void balanceClasses(const at::Tensor& trainingTargets);
  const std::string& name() const { return name_; }
  int64_t ignoreIndex() const { return ignoreIndex_; }

 private:
  enum class Kind { CrossEntropy, Nll, Mse, L1, SmoothL1, Huber, BceWithLogits, KlDiv };

  void checkShapes(const at::Tensor& output, const at::Tensor& targets) const;

  std::string name_;
  Kind kind_ = Kind::Mse;
  bool takesClassIndices_ = false;
  bool balanced_ = false;
  c10::Device device_{c10::kCPU};
  double labelSmoothing_ = 0.0;
  int64_t ignoreIndex_ = -100;
  double beta_ = 1.0;       // smooth_l1's beta, huber's delta
  int64_t reduction_ = 1;   // at::Reduction::Mean
  bool batchMean_ = false;  // kl_div 'batchmean'
  bool logTarget_ = false;
  at::Tensor weight_;     // per-class weights (cross_entropy, nll)
  at::Tensor posWeight_;  // bce_with_logits
};

}  // namespace firebrand
