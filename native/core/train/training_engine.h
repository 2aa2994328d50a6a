// The training loop: owns a model, its loss and optimizer, and runs whole
// epochs of steps without leaving C++. Per-step losses stay on the device
// and are read back only when a report is due.
#pragma once
#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include <atomic>
#include <memory>
#include <optional>
#include <utility>
#include <string>

#include "core/data/tensor_dataset.h"
#include "core/model/sequential_model.h"
#include "core/options/option_value.h"
#include "core/train/epoch_options.h"
#include "core/train/loss_function.h"
#include "core/train/optimizer_factory.h"
#include "core/train/step_report.h"

namespace firebrand {

class TrainingEngine {
 public:
  TrainingEngine(std::shared_ptr<SequentialModel> model, LossFunction loss, const OptimizerSpec& optimizer,
                 c10::Device device);

  EpochResult trainEpoch(const TensorDataset& dataset, const EpochOptions& options, const ReportSink& report);
  EvalResult evaluate(const TensorDataset& dataset, int64_t batchSize);
  // Model outputs for `inputs` (first dimension = samples), float32 on the CPU.
  at::Tensor predict(const at::Tensor& inputs, int64_t batchSize);

  // Ends the running epoch after its current step; cleared by clearStop().
  void requestStop() { stopRequested_ = true; }
  void clearStop() { stopRequested_ = false; }

  int64_t globalStep() const { return globalStep_; }
  // True between the micro-batches of an accumulation group (gradients are
  // gathered, no optimizer step follows this backward): DDP skips its all-reduce then.
  bool accumulating() const { return accumulating_; }
  const SequentialModel& model() const { return *model_; }
  const c10::Device& device() const { return device_; }

 private:
  // Forward and backward of one micro-batch; its loss is weighted by
  // `lossWeight` (its share of the accumulation group's samples) for backward.
  // Returns the unweighted loss and the outputs, detached.
  std::pair<at::Tensor, at::Tensor> forwardBackward(const Batch& batch, double lossWeight);
  // Clips, checks for non-finite values and steps the optimizer once per group.
  // Returns false when the step was skipped (nonFiniteLoss: 'skip').
  bool optimizerStep(const at::Tensor& groupLoss, const StepPolicy& policy, std::optional<double>& gradNorm);
  Batch toDevice(const Batch& batch) const;
  at::Tensor inputsToDevice(const at::Tensor& inputs) const;
  // Runs one sample through the model (eval mode, no grad) so that a data/model
  // mismatch or an out-of-range label fails before any step, naming both sides.
  void checkDatasetFits(const TensorDataset& dataset);

  std::shared_ptr<SequentialModel> model_;
  LossFunction loss_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  c10::Device device_;
  at::ScalarType parameterDtype_;
  std::atomic<bool> stopRequested_{false};
  std::atomic<int64_t> globalStep_{0};  // read from the JS thread while training
  bool accumulating_ = false;
};

}  // namespace firebrand
