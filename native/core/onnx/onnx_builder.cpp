#include "core/onnx/onnx_builder.h"

#include <ATen/Functions.h>

#include "core/errors.h"

namespace firebrand {

int64_t onnxDataType(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat:
      return 1;
    case at::kByte:
      return 2;
    case at::kChar:
      return 3;
    case at::kShort:
      return 5;
    case at::kInt:
      return 6;
    case at::kLong:
      return 7;
    case at::kBool:
      return 9;
    case at::kHalf:
      return 10;
    case at::kDouble:
      return 11;
    case at::kBFloat16:
      return 16;
    default:
      throw InvalidArgument(std::string("exportOnnx: ONNX has no element type for ") + c10::toString(dtype));
  }
}

OnnxBuilder::OnnxBuilder(int64_t opset) { graph_.opset = opset; }

std::string OnnxBuilder::fresh(const std::string& stem) { return stem + "_" + std::to_string(counter_++); }

std::vector<std::string> OnnxBuilder::add(const std::string& opType, const std::vector<std::string>& inputs,
                                          std::vector<OnnxAttribute> attributes, size_t outputs) {
  OnnxNode node;
  node.opType = opType;
  node.name = fresh((scope_.empty() ? "" : scope_ + "/") + opType);
  node.inputs = inputs;
  for (size_t i = 0; i < outputs; ++i) node.outputs.push_back(node.name + (outputs > 1 ? ":" + std::to_string(i) : ""));
  node.attributes = std::move(attributes);
  graph_.nodes.push_back(std::move(node));
  return graph_.nodes.back().outputs;
}

std::string OnnxBuilder::op(const std::string& opType, const std::vector<std::string>& inputs,
                            std::vector<OnnxAttribute> attributes) {
  return add(opType, inputs, std::move(attributes), 1)[0];
}

std::string OnnxBuilder::weight(const std::string& stateName, const at::Tensor& tensor) {
  const auto it = weights_.find(stateName);
  if (it != weights_.end()) return it->second;
  onnxDataType(tensor.scalar_type());
  graph_.initializers.emplace_back(stateName, tensor.detach().to(at::kCPU).contiguous());
  weights_.emplace(stateName, stateName);
  return stateName;
}

std::string OnnxBuilder::constant(const at::Tensor& value) {
  onnxDataType(value.scalar_type());
  const std::string name = fresh("const");
  graph_.initializers.emplace_back(name, value.detach().to(at::kCPU).contiguous());
  return name;
}

std::string OnnxBuilder::ints(const std::vector<int64_t>& values) {
  return constant(at::tensor(values, at::TensorOptions().dtype(at::kLong)));
}

std::string OnnxBuilder::scalar(double value, at::ScalarType dtype) {
  return constant(at::scalar_tensor(value, at::TensorOptions().dtype(dtype)));
}

std::string OnnxBuilder::cast(const std::string& x, at::ScalarType to) {
  return op("Cast", {x}, {{"to", onnxDataType(to)}});
}

std::string OnnxBuilder::reduce(const std::string& opType, const std::string& x, const std::vector<int64_t>& axes,
                                bool keepDims) {
  const int64_t keep = keepDims ? 1 : 0;
  // ReduceSum took its axes as an input from opset 13, the other reductions from 18.
  if (opType == "ReduceSum" || opset() >= 18) return op(opType, {x, ints(axes)}, {{"keepdims", keep}});
  return op(opType, {x}, {{"axes", axes}, {"keepdims", keep}});
}

std::string OnnxBuilder::unsqueeze(const std::string& x, const std::vector<int64_t>& axes) {
  return op("Unsqueeze", {x, ints(axes)});
}

std::string OnnxBuilder::squeeze(const std::string& x, const std::vector<int64_t>& axes) {
  return op("Squeeze", {x, ints(axes)});
}

std::string OnnxBuilder::shape(const std::string& x, int64_t start, std::optional<int64_t> end) {
  std::vector<OnnxAttribute> attributes;
  if (start != 0) attributes.push_back({"start", start});
  if (end) attributes.push_back({"end", *end});
  return op("Shape", {x}, std::move(attributes));
}

void OnnxBuilder::rename(const std::string& from, const std::string& to) {
  OnnxNode node;
  node.opType = "Identity";
  node.name = fresh("output/Identity");
  node.inputs = {from};
  node.outputs = {to};
  graph_.nodes.push_back(std::move(node));
}

}  // namespace firebrand
