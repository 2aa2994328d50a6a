// What a built-in layer's ONNX form reads: the layer's own tensors as
// initializers, and the call's arguments (x, then a layer's extra inputs and
// flags) with their example values from the export's eval forward.
#pragma once
#include <ATen/core/ivalue.h>

#include <functional>
#include <string>
#include <vector>

#include "core/onnx/onnx_builder.h"

namespace firebrand {

struct OnnxLayerCall {
  OnnxBuilder& b;
  // The layer's tensor by its own name ("weight") as an initializer, or "" when it has none.
  std::function<std::string(const std::string&)> tensor;
  // The tensor itself, for a form that rearranges it (a recurrent layer's gates).
  std::function<at::Tensor(const std::string&)> value;
  // The call's arguments after the layer's path: a tensor's ONNX name, "" for a constant or one left out.
  std::vector<std::string> operands;
  // Their example values: tensors, or the constants themselves (None, a bool, a number).
  std::vector<c10::IValue> examples;
  c10::IValue result;  // the call's example output
};

}  // namespace firebrand
