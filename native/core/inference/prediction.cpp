#include "core/inference/prediction.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/utils.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "core/graph/inference_folding.h"
#include "core/model/eval_mode_scope.h"
#include "core/runtime/cpu_memory_cache.h"
#include "core/runtime/inference_run.h"
#include "core/runtime/mixed_precision.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// Floating inputs in the model's dtype on its device; integer inputs (token ids, masks) kept as they are.
at::Tensor onModel(const at::Tensor& input, const PredictionOptions& options, at::ScalarType modelDtype) {
  return input.is_floating_point() ? input.to(options.device, modelDtype) : input.to(options.device);
}

// Runs `forwardSlice(start, length, modelDtype)` over `samples` samples in batches and joins each output.
template <typename ForwardSlice>
std::vector<at::Tensor> inBatches(Model& model, int64_t samples, const std::string& inputsText,
                                  const PredictionOptions& options, ForwardSlice forwardSlice) {
  if (options.batchSize < 1) {
    throw InvalidArgument("batchSize must be a positive integer, got " + std::to_string(options.batchSize));
  }
  if (samples == 0) throw InvalidArgument("predict: inputs " + inputsText + " hold no samples");
  const at::ScalarType modelDtype = model.parameterDtype();
  torch::NoGradGuard noGrad;
  std::optional<c10::InferenceMode> inferenceMode;
  if (options.optimizeForInference) inferenceMode.emplace();
  EvalModeScope evalMode(model);
  InferenceLoweringScope lowering(options.optimizeForInference);
  const InferenceRun::Scope inferenceKernels(options.optimizeForInference);
  // A forward frees and allocates blocks of the same sizes layer after layer (past glibc's mmap
  // threshold at batch 64 of 224x224 images): reused, not faulted in page by zeroed page each time,
  // within the call and by the model's next calls.
  const CpuMemoryCache::Scope reuseFreedBlocks;
  model.keepPredictionMemory();
  std::vector<std::vector<at::Tensor>> batches(model.outputLayout().names.size());
  for (int64_t start = 0; start < samples; start += options.batchSize) {
    const int64_t length = std::min(options.batchSize, samples - start);
    try {
      AutocastScope autocast(options.device.type(), options.autocastDtype);
      const auto outputs = forwardSlice(start, length, modelDtype);
      for (size_t i = 0; i < outputs.size(); ++i) batches[i].push_back(outputs[i].to(at::kCPU));
    } catch (...) {
      rethrowWithContext("predict, samples " + std::to_string(start) + ".." + std::to_string(start + length - 1) +
                         " of inputs " + inputsText);
    }
  }
  // Outputs reach JS as Float32Arrays whatever the model computes in.
  std::vector<at::Tensor> outputs;
  for (const auto& parts : batches) outputs.push_back(at::cat(parts).to(at::kFloat));
  return outputs;
}

}  // namespace

std::vector<at::Tensor> predictInBatches(Model& model, const at::Tensor& inputs, const PredictionOptions& options) {
  return inBatches(model, inputs.dim() == 0 ? 0 : inputs.size(0), shapeText(inputs), options,
                   [&](int64_t start, int64_t length, at::ScalarType modelDtype) {
                     return model.forwardAll(onModel(inputs.narrow(0, start, length), options, modelDtype));
                   });
}

std::vector<at::Tensor> predictInBatches(Model& model, const TensorDict& fields, const PredictionOptions& options) {
  std::string text;
  for (const auto& [name, field] : fields) text += (text.empty() ? "" : ", ") + name + " " + shapeText(field);
  if (fields.empty()) throw InvalidArgument("predict: no input fields given");
  const int64_t samples = fields.begin()->second.dim() == 0 ? 0 : fields.begin()->second.size(0);
  for (const auto& [name, field] : fields) {
    if (field.dim() == 0 || field.size(0) != samples) {
      throw InvalidArgument("predict: every input field needs the same number of samples (first dimension), got " +
                            text);
    }
  }
  return inBatches(model, samples, text, options, [&](int64_t start, int64_t length, at::ScalarType modelDtype) {
    Batch batch;
    for (const auto& [name, field] : fields)
      batch.fields.emplace(name, onModel(field.narrow(0, start, length), options, modelDtype));
    return model.forwardAll(batch);
  });
}

}  // namespace firebrand
