// LoRA on a whole model, as PEFT's get_peft_model(model, LoraConfig(...)) does it:
// adapters on the linear layers that target_modules names, everything else
// frozen; the adapters alone saved and loaded under PEFT's names
// ("base_model.model.<path>.lora_A.weight"), and merged into the weights for export.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/nn/lora.h"
#include "core/tensor_dict.h"

namespace firebrand {

// Adapts the targeted layers and freezes every other parameter; returns the adapted paths. A target
// that matches no layer, a layer that is not linear, or a model without built-in layers is an error.
std::vector<std::string> applyLora(Model& model, const LoraOptions& options);
bool hasLora(Model& model);
// The paths of modules trained beside the adapters (parameters unfrozen that no adapter holds):
// PEFT's modules_to_save.
std::vector<std::string> modulesToSave(Model& model);
// The adapters' weights under PEFT's names, and those modules' parameters and buffers whole.
TensorDict adapterWeights(Model& model);
// The adapters' names in the model's state dict ("<path>.lora_A.weight", ...): a base model's
// checkpoint lacks them, as PEFT loads the base before adding adapters.
std::set<std::string> adapterStateNames(Model& model);
// Loads them; names or shapes that do not fit this model's adapters are an error naming them.
void loadAdapterWeights(Model& model, const TensorDict& weights, const std::string& origin);
// Folds every adapter into its layer's weight and removes it.
void mergeLoraAdapters(Model& model);

}  // namespace firebrand
