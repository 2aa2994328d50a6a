// torch.nn.init's schemes, applied in place without autograd, drawing from the
// default generator exactly as PyTorch's Python functions do.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

#include "core/options/option_value.h"

namespace firebrand {

// `scheme` and `options` as src/nn/module/init.ts resolved them; `owner` names
// the tensor in errors ("layer1.0.conv1.weight").
void applyInit(at::Tensor& tensor, const std::string& scheme, const OptionMap& options, const std::string& owner);

}  // namespace firebrand
