// Model outputs for many samples, in batches, in eval mode without gradients:
// what trainer.predict and an inference Model run.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <optional>
#include <vector>

#include "core/model/model.h"

namespace firebrand {

struct PredictionOptions {
  c10::Device device = c10::Device(c10::kCPU);
  std::optional<at::ScalarType> autocastDtype;  // nullopt: full precision
  int64_t batchSize = 256;
  // The graph's inference lowering (inference_folding.h); false runs every layer as written.
  bool optimizeForInference = true;
};

// Every output (model.outputLayout() order) for `inputs` (first dimension = samples) as float32
// on the CPU. Floating inputs are cast to the model's dtype; integer inputs (token ids) are kept.
std::vector<at::Tensor> predictInBatches(Model& model, const at::Tensor& inputs, const PredictionOptions& options);
// The same for a model that takes several inputs by name (Module.inputFields): `fields` holds them,
// each with the same number of samples.
std::vector<at::Tensor> predictInBatches(Model& model, const TensorDict& fields, const PredictionOptions& options);

}  // namespace firebrand
