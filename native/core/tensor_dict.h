// Tensors by name: a batch's fields, a state dict, a step's logged values.
#pragma once
#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <string>

namespace firebrand {

// std::less<> lets a lookup by string_view or literal skip building a std::string.
using TensorDict = std::map<std::string, at::Tensor, std::less<>>;

// "input, target, mask": the names, for error messages.
std::string fieldNames(const TensorDict& fields);

}  // namespace firebrand
