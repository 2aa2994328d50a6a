// What a model gives out besides predictions, whoever holds it (a trainer's
// live model or one Model.load made): its ONNX and TorchScript forms and CPU
// copies of its state dict.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"

namespace firebrand {

// The model as an ONNX graph (eval mode), traced from `example` (Model::onnxGraph). LoRA adapters must be
// merged first: ONNX has no form for them apart from the weights.
OnnxGraph exportOnnx(Model& model, const TensorDict& example, const OnnxExportOptions& options);
// The model as a TorchScript module, written in eval mode, for inference anywhere; adapters merged first.
void exportTorchScript(Model& model, const std::string& path);
// Copies of the parameters and buffers on the CPU, by PyTorch state-dict name, in state-dict order.
std::vector<std::pair<std::string, at::Tensor>> stateDictCopy(const Model& model);

}  // namespace firebrand
