// What the op and layer rows write their ONNX forms with: nodes added in order
// under unique value names, weights added once by state-dict name (a tied
// weight is one initializer), and constants.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/onnx/onnx_graph.h"

namespace firebrand {

// A graph value's ONNX names: one for a tensor or an integer (a 0-d int64), several for a list of tensors.
using OnnxValue = std::vector<std::string>;

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset);

  int64_t opset() const { return graph_.opset; }
  // The module path the nodes added next are named under.
  void setScope(const std::string& scope) { scope_ = scope; }

  // Adds a node with `outputs` outputs and returns their names.
  std::vector<std::string> add(const std::string& opType, const std::vector<std::string>& inputs,
                               std::vector<OnnxAttribute> attributes, size_t outputs);
  // A node with one output.
  std::string op(const std::string& opType, const std::vector<std::string>& inputs,
                 std::vector<OnnxAttribute> attributes = {});

  // A model tensor by its state-dict name: one initializer however often it is read.
  std::string weight(const std::string& stateName, const at::Tensor& tensor);
  std::string constant(const at::Tensor& value);
  // A 1-D int64 constant (shapes, axes, pads).
  std::string ints(const std::vector<int64_t>& values);
  // A 0-d constant of `dtype`.
  std::string scalar(double value, at::ScalarType dtype);
  std::string cast(const std::string& x, at::ScalarType to);

  // Ops whose axes moved from an attribute to an input between opsets.
  std::string reduce(const std::string& opType, const std::string& x, const std::vector<int64_t>& axes, bool keepDims);
  std::string unsqueeze(const std::string& x, const std::vector<int64_t>& axes);
  std::string squeeze(const std::string& x, const std::vector<int64_t>& axes);
  // x's dims [start, end) as a 1-D int64 tensor (no end: to the last).
  std::string shape(const std::string& x, int64_t start = 0, std::optional<int64_t> end = std::nullopt);

  // The graph's declared inputs and outputs.
  void addInput(OnnxValueInfo info) { graph_.inputs.push_back(std::move(info)); }
  void addOutput(OnnxValueInfo info) { graph_.outputs.push_back(std::move(info)); }
  // A value renamed (an output named as the model's output): an Identity node.
  void rename(const std::string& from, const std::string& to);

  OnnxGraph take() { return std::move(graph_); }

 private:
  std::string fresh(const std::string& stem);

  OnnxGraph graph_;
  std::string scope_;
  std::map<std::string, std::string> weights_;  // state-dict name -> initializer name
  size_t counter_ = 0;
};

}  // namespace firebrand
