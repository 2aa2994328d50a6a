// fromPretrained's quantize: 'int8' on a built model, as transformers' load_in_8bit
// (bitsandbytes) does it: every linear layer under the checkpoint's module becomes an
// int8 weight with a float scale per output row (nn/int8_weights.h), except the output
// head (lm_head) and layers whose weight is tied to another tensor, which keep their
// dtype. Quantized weights are frozen: train LoRA adapters on them (QLoRA), or only
// predict and generate.
#pragma once
#include <string>
#include <vector>

#include "core/model/model.h"

namespace firebrand {

// The linear layers under the module paths `roots` ("" is the whole model) that quantizeInt8 will
// quantize: their weights are frozen now, so that no optimizer made after this holds them.
void freezeForInt8(Model& model, const std::vector<std::string>& roots);
// Replaces those layers' weights (loaded by now) by int8 values and scales; returns their paths.
std::vector<std::string> quantizeInt8(Model& model, const std::vector<std::string>& roots);
// The first quantized layer's path, or "" when none is: exports and merges refuse such a model.
std::string firstQuantizedLayer(Model& model);

}  // namespace firebrand
