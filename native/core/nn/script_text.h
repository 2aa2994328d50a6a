// TorchScript source text that layer and op rows write their export forms in:
// literals, and the tensors of a layer as the exported module's attributes.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace firebrand {

std::string scriptNumber(double value);  // always with a "." or exponent: 1.0, 1e-05
std::string scriptBool(bool value);
std::string scriptString(const std::string& text);  // a quoted string literal
std::string scriptList(const std::vector<int64_t>& values);
// F.interpolate of `input` ([N, C, H, W]) as aten ops: to `size` (a list expression) or by `scale`
// (a float expression, when size is "None"; the size is then floor(H * scale), floor(W * scale)).
std::string scriptInterpolate(const std::string& input, const std::string& size, const std::string& scale, bool nearest,
                              const std::string& alignCorners);

// A layer's tensor by its own name ("weight") as the exported module's attribute ("self.l0_weight"),
// or "None" when the layer has no such tensor.
using ScriptTensor = std::function<std::string(const std::string&)>;

// What a layer's export form reads besides its options.
struct LayerScriptContext {
  ScriptTensor tensor;
  std::vector<std::string> parameters;  // the layer's own parameters, in registration order
  std::vector<std::string> operands;    // the call's operands as expressions: x, then a layer's extra inputs
};

// A layer call as TorchScript: its expression, and the helper method it calls (source added once), if any.
struct ScriptCall {
  std::string expression;
  const char* method = nullptr;
};

}  // namespace firebrand
