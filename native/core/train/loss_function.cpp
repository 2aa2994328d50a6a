#include "core/train/loss_function.h"

#include <ATen/ATen.h>

#include <limits>

#include "core/class_rows.h"
#include "core/errors.h"
#include "core/options/resolved_options.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

constexpr int64_t kReductionMean = 1;  // at::Reduction::Mean
constexpr int64_t kReductionSum = 2;   // at::Reduction::Sum

// A per-class list option (class weights, pos_weight) as a float tensor, or undefined.
at::Tensor classWeights(ResolvedOptions& options, const std::string& name) {
  const auto values = options.optionalNumbers(name);
  return values ? at::tensor(*values, at::TensorOptions().dtype(at::kFloat)) : at::Tensor();
}

}  // namespace

LossFunction::LossFunction(const std::string& name, const OptionMap& optionMap) : name_(name) {
  ResolvedOptions options("loss (" + name + ")", optionMap);
  if (name == "cross_entropy" || name == "nll") {
    kind_ = name == "nll" ? Kind::Nll : Kind::CrossEntropy;
    takesClassIndices_ = true;
    ignoreIndex_ = options.integer("ignoreIndex");
    balanced_ = options.holdsText("weight") && options.text("weight") == "balanced";
    if (!balanced_) weight_ = classWeights(options, "weight");
    if (kind_ == Kind::CrossEntropy) labelSmoothing_ = options.number("labelSmoothing");
  } else if (name == "smooth_l1") {
    kind_ = Kind::SmoothL1;
    beta_ = options.number("beta");
  } else if (name == "huber") {
    kind_ = Kind::Huber;
    beta_ = options.number("delta");
  } else if (name == "mse" || name == "l1") {
    kind_ = name == "mse" ? Kind::Mse : Kind::L1;
  } else if (name == "bce_with_logits") {
    kind_ = Kind::BceWithLogits;
    posWeight_ = classWeights(options, "posWeight");
  } else if (name == "kl_div") {
    kind_ = Kind::KlDiv;
    const std::string reduction = options.text("reduction");
    reduction_ = reduction == "mean" ? kReductionMean : kReductionSum;
    batchMean_ = reduction == "batchmean";
    logTarget_ = options.flag("logTarget");
  } else {
    throw InvalidState("firebrand bug: loss '" + name + "' reached C++ unresolved");
  }
  options.finish();
}

void LossFunction::balanceClasses(const at::Tensor& trainingTargets) {
  const at::Tensor counted = trainingTargets.to(at::kCPU, at::kLong).flatten();
  const at::Tensor labels = counted.masked_select(counted != ignoreIndex_);
  if (labels.numel() == 0 || labels.min().item<int64_t>() < 0) {
    throw InvalidArgument("loss (" + name_ + "): weight 'balanced' needs class-index training targets (labels from 0)" +
                          (labels.numel() == 0 ? std::string(", and every target is ignoreIndex") : std::string()));
  }
  const at::Tensor counts = at::bincount(labels).to(at::kDouble);
  const at::Tensor missing = (counts == 0).nonzero();
  if (missing.numel() > 0) {
    throw InvalidArgument(
        "loss (" + name_ + "): weight 'balanced': class " + std::to_string(missing[0][0].item<int64_t>()) +
        " has no sample among the " + std::to_string(labels.numel()) + " training targets (labels 0 to " +
        std::to_string(counts.numel() - 1) + " seen), so its weight would divide by zero; give the weights as a list");
  }
  const at::Tensor weights = static_cast<double>(labels.numel()) / (static_cast<double>(counts.numel()) * counts);
  weight_ = weights.to(at::kFloat).to(device_);
}

void LossFunction::to(const c10::Device& device) {
  device_ = device;
  if (weight_.defined()) weight_ = weight_.to(device);
  if (posWeight_.defined()) posWeight_ = posWeight_.to(device);
}

at::Tensor LossFunction::prepareTargets(const at::Tensor& targets) const {
  if (takesClassIndices_) {
    if (targets.is_floating_point() || targets.scalar_type() == at::kBool) {
      throw InvalidArgument("loss (" + name_ +
                            "): targets must be integer class labels (Int32Array, "
                            "BigInt64Array, Uint8Array, ...), got " +
                            shapeAndDtypeText(targets));
    }
    return targets.scalar_type() == at::kLong ? targets : targets.to(at::kLong);
  }
  return targets.is_floating_point() ? targets : targets.to(at::kFloat);
}

void LossFunction::checkLabelRange(const at::Tensor& targets, int64_t classes,
                                   c10::ArrayRef<int64_t> sampleIndices) const {
  if (!takesClassIndices_) return;
  if (weight_.defined() && weight_.numel() != classes) {
    throw ShapeMismatch("loss (" + name_ + "): field 'weight' holds " + std::to_string(weight_.numel()) +
                        " class weights" +
                        (balanced_ ? std::string(" ('balanced': the training targets' labels 0 to ") +
                                         std::to_string(weight_.numel() - 1) + ")"
                                   : std::string()) +
                        " but the model has " + std::to_string(classes) + " outputs");
  }
  const at::Tensor bad = (targets < 0).logical_or(targets >= classes).logical_and(targets != ignoreIndex_);
  if (!bad.any().item<bool>()) return;
  const int64_t index = bad.flatten().nonzero().select(1, 0)[0].item<int64_t>();
  const int64_t label = targets.flatten()[index].item<int64_t>();
  // A sample's labels are contiguous in the flattened targets ([N] or [N, d...]).
  const int64_t position = index / std::max<int64_t>(1, targets.numel() / std::max<int64_t>(1, targets.size(0)));
  const std::string where = position < static_cast<int64_t>(sampleIndices.size())
                                ? "of dataset sample " + std::to_string(sampleIndices[position])
                                : "at position " + std::to_string(index) + " of the batch";
  throw InvalidArgument("loss (" + name_ + "): target label " + std::to_string(label) + " " + where +
                        " is out of range for a model with " + std::to_string(classes) +
                        " outputs (labels must be in [0, " + std::to_string(classes - 1) + "])");
}

void LossFunction::checkClassDimension(const at::Tensor& output, const at::Tensor& targets) const {
  if (!takesClassIndices_ || output.dim() < 3 || targets.dim() != output.dim() - 1) return;
  const bool classesOnDim1 = targets.sizes().slice(1) == output.sizes().slice(2);
  const bool classesLast = targets.sizes().slice(1) == output.sizes().slice(1, output.dim() - 2);
  if (classesOnDim1 || !classesLast) return;
  throw ShapeMismatch("loss (" + name_ + "): model output " + shapeText(output) + " holds its " +
                      std::to_string(output.size(-1)) + " classes last, against targets " + shapeText(targets) +
                      "; classes go on dim 1 ([N, C, d...], as PyTorch's cross_entropy takes them): return "
                      "logits.transpose(1, 2) from forward");
}

void LossFunction::checkShapes(const at::Tensor& output, const at::Tensor& targets) const {
  if (balanced_ && !weight_.defined()) {
    throw InvalidState("loss (" + name_ +
                       "): weight 'balanced' comes from fit's training targets, and this trainer has not fitted yet; "
                       "fit first, or give the weights as a list to evaluate before any fit");
  }
  if (takesClassIndices_) {
    const bool fits = output.dim() >= 2 && targets.dim() == output.dim() - 1 && targets.size(0) == output.size(0) &&
                      targets.sizes().slice(1) == output.sizes().slice(2);
    if (!fits) {
      throw ShapeMismatch("loss (" + name_ + "): model output " + shapeText(output) + " and targets " +
                          shapeText(targets) +
                          " do not fit; it expects output [N, C] with class-index "
                          "targets [N] (or [N, C, d...] with [N, d...])");
    }
  } else if (output.sizes() != targets.sizes()) {
    throw ShapeMismatch("loss (" + name_ + "): model output " + shapeText(output) + " and targets " +
                        shapeText(targets) +
                        " differ in shape; they must be equal (targets [N] are "
                        "accepted for output [N, 1])");
  }
}

double LossFunction::countedTargets(const at::Tensor& targets) const {
  const at::Tensor counted = targets != ignoreIndex_;
  if (!weight_.defined()) return counted.sum().item<double>();
  // Clamped: a label out of range is named by checkLabelRange when its batch is prepared.
  const at::Tensor classes =
      targets.to(weight_.device(), at::kLong).masked_select(counted.to(weight_.device())).clamp(0, weight_.size(0) - 1);
  return weight_.index_select(0, classes).sum().item<double>();
}

at::Tensor LossFunction::summed(const at::Tensor& halfOrFullOutput, const at::Tensor& targets) const {
  const bool half = halfOrFullOutput.scalar_type() == at::kBFloat16 || halfOrFullOutput.scalar_type() == at::kHalf;
  const at::Tensor output = half ? halfOrFullOutput.to(at::kFloat) : halfOrFullOutput;
  checkShapes(output, targets);
  const auto [rows, labels] = classRows(output, targets);
  if (kind_ == Kind::CrossEntropy)
    return at::cross_entropy_loss(rows, labels, weight_, kReductionSum, ignoreIndex_, labelSmoothing_);
  if (kind_ == Kind::Nll) return at::nll_loss_nd(rows, labels, weight_, kReductionSum, ignoreIndex_);
  throw InvalidState("firebrand bug: loss (" + name_ + ") has no count of targets to sum over");
}

at::Tensor LossFunction::operator()(const at::Tensor& halfOrFullOutput, const at::Tensor& rawTargets) const {
  // A half-precision output (a model cast to bfloat16 or float16) is scored in float32, as transformers'
  // losses upcast logits and autocast runs losses.
  const bool half = halfOrFullOutput.scalar_type() == at::kBFloat16 || halfOrFullOutput.scalar_type() == at::kHalf;
  const at::Tensor output = half ? halfOrFullOutput.to(at::kFloat) : halfOrFullOutput;
  // A regression model's [N, 1] output against flat [N] targets is the common
  // case from JS; PyTorch would broadcast it to [N, N] with only a warning.
  const bool flatTargets = !takesClassIndices_ && output.dim() == 2 && output.size(1) == 1 && rawTargets.dim() == 1 &&
                           rawTargets.size(0) == output.size(0);
  const at::Tensor targets = flatTargets ? rawTargets.unsqueeze(1) : rawTargets;
  checkShapes(output, targets);
  const auto same = [&] { return targets.to(output.scalar_type()); };
  const auto [rows, labels] = classRows(output, targets);
  switch (kind_) {
    case Kind::CrossEntropy:
      return at::cross_entropy_loss(rows, labels, weight_, kReductionMean, ignoreIndex_, labelSmoothing_);
    case Kind::Nll:
      return at::nll_loss_nd(rows, labels, weight_, kReductionMean, ignoreIndex_);
    case Kind::Mse:
      return at::mse_loss(output, same(), kReductionMean);
    case Kind::L1:
      return at::l1_loss(output, same(), kReductionMean);
    case Kind::SmoothL1:
      return at::smooth_l1_loss(output, same(), kReductionMean, beta_);
    case Kind::Huber:
      return at::huber_loss(output, same(), kReductionMean, beta_);
    case Kind::BceWithLogits:
      return at::binary_cross_entropy_with_logits(output, same(), {}, posWeight_, kReductionMean);
    case Kind::KlDiv:
      break;
  }
  const at::Tensor loss = at::kl_div(output, same(), reduction_, logTarget_);
  return batchMean_ ? loss / static_cast<double>(output.size(0)) : loss;
}

}  // namespace firebrand
