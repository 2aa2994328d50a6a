// One step of TrainingEngine: forward and loss (or the model's own
// training_step), backward, and the optimizer step with its clipping, loss
// scaling and non-finite checks.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/types.h>

// After torch/types.h: clip_grad.h names torch::Tensor without including it.
#include <torch/nn/utils.h>

#include <cmath>

#include "core/errors.h"
#include "core/runtime/cpu_memory_cache.h"
#include "core/runtime/mixed_precision.h"
#include "core/train/loop_support.h"
#include "core/train/training_engine.h"

namespace firebrand {

void TrainingEngine::zeroGrads() {
  for (auto& unit : units_) unit.zeroGrad();
}

void TrainingEngine::prefaultGradients() {
  std::vector<size_t> bytes;
  for (const at::Tensor& parameter : parameters_) {
    if (parameter.requires_grad() && parameter.is_cpu() && !parameter.grad().defined())
      bytes.push_back(parameter.nbytes());
  }
  CpuMemoryCache::prefault(bytes);
}

bool TrainingEngine::countsTargets() const {
  return !model_->hasTrainingStep() && lossFunction("train").countsTargets();
}

std::vector<double> TrainingEngine::lossWeights(const std::vector<Batch>& group) const {
  const bool counts = countsTargets();
  std::vector<double> weights;
  for (const Batch& batch : group) {
    weights.push_back(counts ? lossFunction("train").countedTargets(batch.targets())
                             : static_cast<double>(batch.size()));
  }
  return weights;
}

TrainingEngine::StepValues TrainingEngine::runStep(const Batch& batch, bool training, std::optional<double> counted) {
  AutocastScope autocast(device_.type(), autocastDtype_);
  const bool custom = training ? model_->hasTrainingStep() : model_->hasValidationStep();
  if (!custom) {
    const LossFunction& loss = lossFunction(training ? "train" : "evaluate (or define validation_step)");
    StepValues values;
    values.output = model_->forward(batch);
    // A micro-batch whose targets are all ignored sums to 0, where a mean would be NaN.
    values.loss = counted ? loss.summed(values.output, batch.targets()) / (*counted > 0 ? *counted : 1.0)
                          : loss(values.output, batch.targets());
    return values;
  }
  TensorDict logged = training ? model_->trainingStep(batch.fields) : model_->validationStep(batch.fields);
  const char* method = training ? "training_step" : "validation_step";
  const auto scalarEntry = [&](const std::string& key) {
    const auto it = logged.find(key);
    if (it == logged.end() || it->second.numel() != 1) {
      std::string keys;
      for (const auto& entry : logged) keys += (keys.empty() ? "" : ", ") + entry.first;
      throw InvalidArgument(std::string(method) + " must return a Dict[str, Tensor] with a scalar '" + key +
                            "'; it returned {" + keys + "}");
    }
    return it->second.reshape({});
  };
  StepValues values;
  if (training && units_.size() > 1) {
    // Several optimizers: each steps on its own loss; "loss" reports their sum.
    for (const auto& unit : units_) values.unitLosses.push_back(scalarEntry(unit.lossKey()));
    values.loss = at::stack(values.unitLosses).sum();
  } else {
    values.loss = scalarEntry("loss");
    logged.erase("loss");
  }
  values.logged = std::move(logged);
  return values;
}

double TrainingEngine::trainMicroBatch(const Batch& batch, double lossWeight, std::optional<double> counted) {
  const StepValues step = forwardBackward(batch, lossWeight, counted);
  // Read back every micro-batch: the step's finite check needs it anyway, and host
  // sums cost no tensor ops (which dominate small models' steps).
  const double loss = lossValue(step.loss);
  torch::NoGradGuard noGrad;  // the step's values still carry its graph
  if (step.output.defined()) metrics_.update(step.output, batch.targets());
  if (!step.logged.empty()) addLogged(epochTotals_.loggedSums, step.logged, batch.size());
  return loss;
}

TrainingEngine::StepValues TrainingEngine::forwardBackward(const Batch& batch, double lossWeight,
                                                           std::optional<double> counted) {
  StepValues values = runStep(batch, /*training=*/true, counted);
  const auto weighted = [&](const at::Tensor& loss) {
    return scaler_.scale(lossWeight == 1.0 ? loss : loss * lossWeight);
  };
  if (values.unitLosses.empty()) {
    // DDP's bucket all-reduce hooks will fire during this backward.
    weighted(values.loss).backward();
  } else {
    // Each optimizer's parameters get the gradient of its own loss only (a generator's
    // loss must not move the discriminator), added to what accumulation gathered.
    for (size_t i = 0; i < units_.size(); ++i) {
      const auto& parameters = units_[i].parameters();
      const auto grads = torch::autograd::grad({weighted(values.unitLosses[i])}, parameters, {},
                                               /*retain_graph=*/i + 1 < units_.size(), /*create_graph=*/false,
                                               /*allow_unused=*/true);
      for (size_t p = 0; p < parameters.size(); ++p) {
        if (!grads[p].defined()) continue;
        at::Tensor& grad = const_cast<at::Tensor&>(parameters[p]).mutable_grad();
        grad = grad.defined() ? grad + grads[p] : grads[p];
      }
    }
  }
  // Not detached (a dispatcher call and a tensor each, per step): the values are
  // only read as numbers or summed under no-grad, and the graph ends with the step.
  values.unitLosses.clear();
  return values;
}

bool TrainingEngine::optimizerStep(double groupLoss, std::optional<double>& gradNorm) {
  const StepPolicy& policy = fit_->step;
  // Gradients are all-reduced before this point.
  const bool lossFinite = std::isfinite(groupLoss);
  const auto& parameters = parameters_;
  gradNorm.reset();
  at::Tensor foundInf;
  if (scaler_.enabled() && lossFinite) {
    // Overflowing fp16 gradients are the scaler's business: skip, back off, go on.
    foundInf = scaler_.unscale(parameters);
    if (foundInf.item<float>() > 0) {
      zeroGrads();
      scaler_.update(foundInf);
      return false;
    }
  }
  if (lossFinite && policy.maxGradNorm) {
    gradNorm = torch::nn::utils::clip_grad_norm_(parameters, *policy.maxGradNorm);
  }
  const bool normFinite = !gradNorm || std::isfinite(*gradNorm);
  if (!lossFinite || !normFinite) {
    const std::string what = lossFinite ? "non-finite gradient norm (" + std::to_string(*gradNorm) + ")"
                                        : "non-finite loss (" + std::to_string(groupLoss) + ")";
    zeroGrads();
    if (policy.nonFiniteLoss == NonFiniteLossPolicy::Error) {
      // NaN or Inf in the data is the usual cause: checkFiniteInputs names the sample.
      const std::string dataHint =
          checkFiniteInputs_ ? "The inputs of the step were finite (checkFiniteInputs). "
                             : "If the data may hold NaN or Inf, set checkFiniteInputs: true to name the sample. ";
      throw NonFiniteValue(what + " at global step " + std::to_string(globalStep_ + 1) +
                           "; the weights were not updated. " + dataHint +
                           "To drop such steps and train on, set nonFiniteLoss: 'skip'");
    }
    return false;
  }
  if (policy.clipValue) torch::nn::utils::clip_grad_value_(parameters, *policy.clipValue);
  for (auto& unit : units_) unit.step();
  ranks_->afterOptimizerStep();
  if (average_) average_->update(globalStep_ + 1);
  if (foundInf.defined()) scaler_.update(foundInf);
  zeroGrads();
  ++globalStep_;
  return true;
}

}  // namespace firebrand
