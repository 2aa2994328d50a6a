// Tensors by name: a batch's fields, a state dict, a step's logged values.
#pragma once
#include <ATen/core/Tensor.h>

#include <map>
#include <string>

namespace firebrand {

using TensorDict = std::map<std::string, at::Tensor>;

// "input, target, mask": the names, for error messages.
std::string fieldNames(const TensorDict& fields);

}  // namespace firebrand
