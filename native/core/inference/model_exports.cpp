#include "core/inference/model_exports.h"

#include "core/errors.h"
#include "core/model/eval_mode_scope.h"
#include "core/model/int8_quantization.h"
#include "core/model/lora_adapters.h"

namespace firebrand {
namespace {

// Exports write a plain float graph: adapters must be merged first, and int8 layers have no such form.
void requireExportable(Model& model, const std::string& operation) {
  if (hasLora(model)) {
    throw InvalidState(operation +
                       ": the model has LoRA adapters; merge them into the weights first (mergeAdapter), "
                       "or save them alone (saveAdapter)");
  }
  const std::string quantized = firstQuantizedLayer(model);
  if (!quantized.empty()) {
    throw InvalidState(operation + ": '" + quantized +
                       "' holds int8 weights (fromPretrained quantize: 'int8'); export the model loaded without "
                       "quantize, with the adapter merged");
  }
}

}  // namespace

OnnxGraph exportOnnx(Model& model, const TensorDict& example, const OnnxExportOptions& options) {
  requireExportable(model, "exportOnnx");
  return model.onnxGraph(example, options);
}

void exportTorchScript(Model& model, const std::string& path) {
  requireExportable(model, "exportTorchScript");
  EvalModeScope evalMode(model);
  model.saveTorchScript(path);
}

std::vector<std::pair<std::string, at::Tensor>> stateDictCopy(const Model& model) {
  auto state = model.orderedStateTensors();
  for (auto& [name, tensor] : state) tensor = tensor.detach().to(at::kCPU, false, /*copy=*/true);
  return state;
}

}  // namespace firebrand
