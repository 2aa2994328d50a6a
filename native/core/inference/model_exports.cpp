#include "core/inference/model_exports.h"

#include "core/errors.h"
#include "core/model/eval_mode_scope.h"
#include "core/model/lora_adapters.h"

namespace firebrand {
namespace {

void requireNoAdapters(Model& model, const std::string& operation) {
  if (hasLora(model)) {
    throw InvalidState(operation +
                       ": the model has LoRA adapters; merge them into the weights first (mergeAdapter), "
                       "or save them alone (saveAdapter)");
  }
}

}  // namespace

OnnxGraph exportOnnx(Model& model, const TensorDict& example, const OnnxExportOptions& options) {
  requireNoAdapters(model, "exportOnnx");
  return model.onnxGraph(example, options);
}

void exportTorchScript(Model& model, const std::string& path) {
  requireNoAdapters(model, "exportTorchScript");
  EvalModeScope evalMode(model);
  model.saveTorchScript(path);
}

std::vector<std::pair<std::string, at::Tensor>> stateDictCopy(const Model& model) {
  auto state = model.orderedStateTensors();
  for (auto& [name, tensor] : state) tensor = tensor.detach().to(at::kCPU, false, /*copy=*/true);
  return state;
}

}  // namespace firebrand
