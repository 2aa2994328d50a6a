// TrainingEngine's batches on their way to the model: checked (finite
// inputs, labels in range, shapes that fit, before any step) and moved to the device.
#include <ATen/ATen.h>

#include "core/errors.h"
#include "core/model/eval_mode_scope.h"
#include "core/shape_text.h"
#include "core/train/training_engine.h"

namespace firebrand {

at::Tensor TrainingEngine::inputsToDevice(const at::Tensor& inputs) const {
  // Floating inputs follow the model's dtype (Float64Array data into a float32
  // model); integer inputs (token ids) are left as they are.
  // Checked here: .to() returns a tensor that already fits too, but after a dispatch per step.
  const bool convert = inputs.is_floating_point() && inputs.scalar_type() != parameterDtype_;
  if (inputs.device() == device_ && !convert) return inputs;
  if (inputs.is_floating_point()) return inputs.to(device_, parameterDtype_, /*non_blocking=*/true);
  return inputs.to(device_, /*non_blocking=*/true);
}

Batch TrainingEngine::prepareBatch(Batch batch) const {
  for (auto& [name, tensor] : batch.fields) {
    if (checkFiniteInputs_ && tensor.is_floating_point() && tensor.numel() > 0) {
      const at::Tensor bad = at::logical_not(at::isfinite(tensor)).reshape({tensor.size(0), -1}).any(1);
      if (bad.any().item<bool>()) {
        const int64_t sample = bad.nonzero()[0][0].item<int64_t>();
        const std::string where = sample < static_cast<int64_t>(batch.sampleIndices.size())
                                      ? "in dataset sample " + std::to_string(batch.sampleIndices[sample])
                                      : "at position " + std::to_string(sample) + " of the batch";
        throw NonFiniteValue("field '" + name + "' holds NaN or Inf " + where + " (checkFiniteInputs)");
      }
    }
    if (name == kInputField) {
      tensor = inputsToDevice(tensor);
      continue;
    }
    if (name == kTargetField && loss_) {
      tensor = loss_->prepareTargets(tensor);
      // On the CPU, before the copy: an out-of-range label on CUDA is a device-side assert.
      if (classCount_) loss_->checkLabelRange(tensor, *classCount_, batch.sampleIndices);
    }
    if (tensor.device() != device_) tensor = tensor.to(device_, /*non_blocking=*/true);
  }
  return batch;
}

LoaderOptions TrainingEngine::loaderOptions(LoaderOptions options) const {
  options.pinMemory = device_.is_cuda();
  return options;
}

const LossFunction& TrainingEngine::lossFunction(const char* purpose) const {
  if (!loss_) throw InvalidArgument(std::string("loss: needed to ") + purpose);
  return *loss_;
}

void TrainingEngine::checkBatchFits(const Batch& batch, const std::string& inputOrigin) {
  // A model's own steps check their batches themselves.
  if (!loss_ || model_->hasTrainingStep()) return;
  torch::NoGradGuard noGrad;
  EvalModeScope evalMode(*model_);
  Batch sample;
  for (const auto& [name, tensor] : batch.fields) sample.fields.emplace(name, tensor.narrow(0, 0, 1));
  // Errors name the sample by its dataset index, not its place in this one-sample batch.
  if (!batch.sampleIndices.empty()) sample.sampleIndices = batch.sampleIndices.slice(0, 1);
  sample = prepareBatch(std::move(sample));
  at::Tensor output;
  try {
    output = model_->forward(sample);
  } catch (const ShapeMismatch& error) {
    throw ShapeMismatch("dataset " + model_->describeInputs(batch) + " do not fit the model: " + error.what() +
                        (inputOrigin.empty() ? "" : "; the samples are " + inputOrigin));
  }
  if (loss_->takesClassIndices() && output.dim() >= 2) {
    loss_->checkClassDimension(output, sample.targets());
    classCount_ = output.size(1);
    loss_->checkLabelRange(sample.targets().cpu(), *classCount_,
                           batch.sampleIndices.empty() ? batch.sampleIndices : batch.sampleIndices.slice(0, 1));
  }
  try {
    (*loss_)(output, sample.targets());
  } catch (const ShapeMismatch& error) {
    throw ShapeMismatch("dataset targets of shape " + shapeText(batch.targets().sizes().slice(1)) +
                        " per sample do not fit the model's output of shape " + shapeText(output.sizes().slice(1)) +
                        " per sample: " + error.what());
  }
}

Batch TrainingEngine::firstBatch(BatchStream& stream) {
  std::optional<Batch> first = stream.next();
  if (!first) throw InvalidArgument("the data gave no batches");
  classCount_.reset();
  checkBatchFits(*first, stream.inputOrigin());
  return std::move(*first);
}

}  // namespace firebrand
