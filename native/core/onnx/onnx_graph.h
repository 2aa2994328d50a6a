// An ONNX model as the export builds it, before TypeScript encodes it with
// ONNX's protobuf schema (src/export/onnx-file.ts): nodes in topological order,
// weights and constants as initializers, and the graph's inputs and outputs.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace firebrand {

// A float attribute is written as ONNX's 32-bit float.
using OnnxAttributeValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, std::vector<std::string>>;

struct OnnxAttribute {
  std::string name;
  OnnxAttributeValue value;
};

struct OnnxNode {
  std::string opType;
  std::string name;                 // "<module path>/<op>_<n>": where the node came from
  std::vector<std::string> inputs;  // "" for an optional input left out
  std::vector<std::string> outputs;
  std::vector<OnnxAttribute> attributes;
};

// A dimension: a fixed size, a named dynamic axis ("batch"), or unknown (size -1, no name).
struct OnnxDim {
  int64_t size = -1;
  std::string name;
};

struct OnnxValueInfo {
  std::string name;
  at::ScalarType dtype = at::kFloat;
  std::vector<OnnxDim> dims;
};

struct OnnxGraph {
  int64_t opset = 17;
  std::vector<OnnxNode> nodes;
  std::vector<std::pair<std::string, at::Tensor>> initializers;  // contiguous, on the CPU
  std::vector<OnnxValueInfo> inputs;
  std::vector<OnnxValueInfo> outputs;
};

// ONNX's TensorProto.DataType of `dtype`; throws for a type ONNX has no element type for.
int64_t onnxDataType(at::ScalarType dtype);

}  // namespace firebrand
