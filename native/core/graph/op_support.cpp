#include "core/graph/op_support.h"

#include "core/nn/script_text.h"

namespace firebrand {

at::Scalar scalarAt(const NodeArgs& a, size_t i) {
  const JsonValue& value = a.node().args.at(i);
  if (const auto* integer = value.integer()) return at::Scalar(*integer);
  return at::Scalar(a.number(i));
}

Operand operand(const NodeArgs& a, size_t i) {
  if (a.isTensor(i)) return {a.tensor(i), at::Scalar()};
  return {-1, scalarAt(a, i)};
}

c10::IValue operandValue(const GraphFrame& f, const Operand& operand) {
  return operand.slot >= 0 ? f.values[operand.slot] : c10::IValue(operand.scalar);
}

c10::optional<at::Tensor> optionalT(const GraphFrame& frame, const std::optional<int64_t>& slot) {
  if (!slot) return c10::nullopt;
  return T(frame, *slot);
}

std::vector<int64_t> constants(const std::vector<IntArg>& args) { return intValues(args, GraphFrame{}); }

OpRow torchUnary(const char* name, at::Tensor (*fn)(const at::Tensor&), OnnxForm onnx) {
  return {name, unaryOp(fn), scriptCall(std::string("torch.") + name), std::move(onnx)};
}

OnnxForm onnxUnary(const std::string& opType) {
  return [opType](const OnnxOp& o) -> OnnxValue { return {o.b.op(opType, {o.tensor(0)})}; };
}

OnnxForm onnxBinary(const std::string& opType) {
  return [opType](const OnnxOp& o) -> OnnxValue {
    const at::ScalarType type = o.resultType();
    // PyTorch multiplies booleans (a logical and); ONNX's Mul takes numbers only.
    const std::string op = type == at::kBool && opType == "Mul" ? "And" : opType;
    return {o.b.op(op, {o.operand(0, type), o.operand(1, type)})};
  };
}

std::vector<int64_t> onnxAxes(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<int64_t> axes;
  for (const int64_t dim : dims) axes.push_back(normalizedDim(dim, rank));
  return axes;
}

std::string onnxReduction(const OnnxOp& o, const std::string& opType, const std::string& x, size_t dimsArg,
                          size_t keepArg) {
  const int64_t rank = o.rank(0);
  std::vector<int64_t> axes;
  if (isNullArg(o.args.node(), dimsArg)) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  } else {
    axes = onnxAxes(o.constants(dimsArg), rank);
  }
  const bool keep = isNullArg(o.args.node(), dimsArg) ? false : o.args.flag(keepArg);
  return o.b.reduce(opType, x, axes, keep);
}

namespace {

std::string joined(const ScriptArgs& args, size_t from) {
  std::string out;
  for (size_t i = from; i < args.size(); ++i) out += (i > from ? ", " : "") + args[i];
  return out;
}

}  // namespace

OpScript scriptCall(const std::string& function) {
  return [function](const GraphNode&, const ScriptArgs& a) { return function + "(" + joined(a, 0) + ")"; };
}

OpScript scriptMethod(const std::string& method) {
  return [method](const GraphNode&, const ScriptArgs& a) { return a.at(0) + "." + method + "(" + joined(a, 1) + ")"; };
}

std::string scriptLiteral(const JsonValue& value) {
  if (const auto* object = value.object()) return "v" + std::to_string(*object->at("v").integer());
  if (const auto* list = value.array()) {
    std::string out = "[";
    for (size_t i = 0; i < list->size(); ++i) out += (i ? ", " : "") + scriptLiteral((*list)[i]);
    return out + "]";
  }
  if (const auto* integer = value.integer()) return std::to_string(*integer);
  if (const auto* number = std::get_if<double>(&value.value)) return scriptNumber(*number);
  if (const auto* flag = std::get_if<bool>(&value.value)) return scriptBool(*flag);
  if (const auto* text = value.string()) return scriptString(*text);
  return "None";
}

std::string scriptDims(const JsonValue& value) {
  return value.array() ? scriptLiteral(value) : "[" + scriptLiteral(value) + "]";
}

std::string scriptReal(const JsonValue& value) {
  if (const auto* integer = value.integer()) return scriptNumber(static_cast<double>(*integer));
  return scriptLiteral(value);
}

std::string scriptDtype(const JsonValue& value) {
  return std::to_string(static_cast<int>(dtypeNamed(*value.string(), "exportTorchScript")));
}

bool isNullArg(const GraphNode& node, size_t i) {
  return std::holds_alternative<std::nullptr_t>(node.args.at(i).value);
}

}  // namespace firebrand
