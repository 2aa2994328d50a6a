// Weight tying into a built-in layer (`head.weight = embed.weight` in
// TypeScript, as in PyTorch): the layer's own tensor is replaced by a tensor
// held elsewhere in the model, so both read and train one tensor.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

#include "core/nn/layer_factory.h"

namespace firebrand {

// Makes `tensor` (the model's tensor `source`) the layer's `name` ("weight" or "bias"), in both
// its registered parameters and the member its forward reads. `owner` names the layer in errors.
void tieLayerTensor(BuiltLayer& layer, const std::string& name, const at::Tensor& tensor, const std::string& owner,
                    const std::string& source);

}  // namespace firebrand
