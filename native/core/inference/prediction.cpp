#include "core/inference/prediction.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <vector>

#include "core/errors.h"
#include "core/model/eval_mode_scope.h"
#include "core/runtime/mixed_precision.h"
#include "core/shape_text.h"

namespace firebrand {

std::vector<at::Tensor> predictInBatches(Model& model, const at::Tensor& inputs, const PredictionOptions& options) {
  if (options.batchSize < 1) {
    throw InvalidArgument("batchSize must be a positive integer, got " + std::to_string(options.batchSize));
  }
  if (inputs.dim() == 0 || inputs.size(0) == 0) {
    throw InvalidArgument("predict: inputs " + shapeText(inputs) + " hold no samples");
  }
  const std::vector<at::Tensor> parameters = model.parameters();
  const at::ScalarType modelDtype = parameters.empty() ? at::kFloat : parameters.front().scalar_type();
  torch::NoGradGuard noGrad;
  EvalModeScope evalMode(model);
  std::vector<std::vector<at::Tensor>> batches(model.outputLayout().names.size());
  for (int64_t start = 0; start < inputs.size(0); start += options.batchSize) {
    const int64_t length = std::min(options.batchSize, inputs.size(0) - start);
    try {
      const at::Tensor batch = inputs.narrow(0, start, length);
      AutocastScope autocast(options.device.type(), options.autocastDtype);
      const auto outputs =
          model.forwardAll(batch.is_floating_point() ? batch.to(options.device, modelDtype) : batch.to(options.device));
      for (size_t i = 0; i < outputs.size(); ++i) batches[i].push_back(outputs[i].to(at::kCPU));
    } catch (...) {
      rethrowWithContext("predict, samples " + std::to_string(start) + ".." + std::to_string(start + length - 1) +
                         " of inputs " + shapeText(inputs));
    }
  }
  // Outputs reach JS as Float32Arrays whatever the model computes in.
  std::vector<at::Tensor> outputs;
  for (const auto& parts : batches) outputs.push_back(at::cat(parts).to(at::kFloat));
  return outputs;
}

}  // namespace firebrand
