// What the op rows share: reading a node's operands when it compiles, and
// writing its arguments as TorchScript when it exports.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>
#include <string>

#include "core/graph/op_row.h"

namespace firebrand {

using OpCompile = std::function<OpRun(const NodeArgs&)>;
using OpScript = std::function<std::string(const GraphNode&, const ScriptArgs&)>;

inline const at::Tensor& T(const GraphFrame& frame, int64_t slot) { return frame.values[slot].toTensor(); }

// A tensor or a number (x.add(y) and x.add(1)); integers stay integers, as in PyTorch.
struct Operand {
  int64_t slot = -1;
  at::Scalar scalar;
};

at::Scalar scalarAt(const NodeArgs& a, size_t i);
Operand operand(const NodeArgs& a, size_t i);
c10::IValue operandValue(const GraphFrame& f, const Operand& operand);
c10::optional<at::Tensor> optionalT(const GraphFrame& frame, const std::optional<int64_t>& slot);
// A list of constant integers, read once when the node compiles.
std::vector<int64_t> constants(const std::vector<IntArg>& args);

// x -> fn(x).
template <typename Fn>
OpCompile unaryOp(Fn fn) {
  return [fn](const NodeArgs& a) -> OpRun {
    a.expectCount(1);
    const int64_t x = a.tensor(0);
    return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x)); };
  };
}

// A unary op that is torch.<name> in the TorchScript form and `onnx` in the ONNX one.
OpRow torchUnary(const char* name, at::Tensor (*fn)(const at::Tensor&), OnnxForm onnx);

// fn(x, y) where y is a tensor or a number: fn takes (Tensor, Tensor) and (Tensor, Scalar).
template <typename Fn>
OpCompile binaryOp(Fn fn) {
  return [fn](const NodeArgs& a) -> OpRun {
    a.expectCount(2);
    const int64_t x = a.tensor(0);
    const Operand y = operand(a, 1);
    if (y.slot >= 0) {
      const int64_t ys = y.slot;
      return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x), T(f, ys)); };
    }
    const at::Scalar other = y.scalar;
    return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x), other); };
  };
}

// x.fn(dim) for an op (x, dim) whose dim is a constant.
template <typename Fn>
OpCompile alongDim(Fn fn) {
  return [fn](const NodeArgs& a) -> OpRun {
    a.expectCount(2);
    const int64_t x = a.tensor(0);
    const int64_t dim = a.integer(1).value;
    return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x), dim); };
  };
}

// Export forms: function(args...) and args[0].method(args[1], ...).
OpScript scriptCall(const std::string& function);
OpScript scriptMethod(const std::string& method);
// A JSON argument as a TorchScript expression ({"v": k} is node k's variable "vk").
std::string scriptLiteral(const JsonValue& value);
// A dims argument given as one integer or a list: always a list.
std::string scriptDims(const JsonValue& value);
// A number where the op takes a float: an integral JSON number gets its ".0".
std::string scriptReal(const JsonValue& value);
// TorchScript compiled from source without Python has no torch.float32: a dtype is its ScalarType number.
std::string scriptDtype(const JsonValue& value);
bool isNullArg(const GraphNode& node, size_t i);

// ONNX forms: one ONNX op on x; one on (x, y) with both operands in the result's dtype (PyTorch
// promotes types where ONNX wants them equal).
OnnxForm onnxUnary(const std::string& opType);
OnnxForm onnxBinary(const std::string& opType);
// A reduction over a node's dims argument `dimsArg` (null: every dim), keepdim at `keepArg`.
std::string onnxReduction(const OnnxOp& o, const std::string& opType, const std::string& x, size_t dimsArg,
                          size_t keepArg);
// dims normalized against rank: ONNX reads negative axes too, but firebrand's forms compare them.
std::vector<int64_t> onnxAxes(const std::vector<int64_t>& dims, int64_t rank);

}  // namespace firebrand
