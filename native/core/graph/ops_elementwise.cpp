// Elementwise math, comparisons (bool tensors), masks and dtype changes.
#include <ATen/Functions.h>

#include "core/graph/op_support.h"

namespace firebrand {
namespace {

// A comparison in ONNX: both operands in PyTorch's promoted type, then `opType` (negated for ne).
OnnxForm comparisonOnnx(const std::string& opType, bool negate) {
  return [opType, negate](const OnnxOp& o) -> OnnxValue {
    const at::ScalarType type = o.args.isTensor(1) ? at::result_type(o.example(0), o.example(1))
                                                   : at::result_type(o.example(0), scalarAt(o.args, 1));
    const std::string compared = o.b.op(opType, {o.operand(0, type), o.operand(1, type)});
    return {negate ? o.b.op("Not", {compared}) : compared};
  };
}

OpRow comparison(const char* name, at::Tensor (*withTensor)(const at::Tensor&, const at::Tensor&),
                 at::Tensor (*withScalar)(const at::Tensor&, const at::Scalar&), OnnxForm onnx) {
  struct Both {
    decltype(withTensor) tensor;
    decltype(withScalar) scalar;
    at::Tensor operator()(const at::Tensor& x, const at::Tensor& y) const { return tensor(x, y); }
    at::Tensor operator()(const at::Tensor& x, const at::Scalar& y) const { return scalar(x, y); }
  };
  return {name, binaryOp(Both{withTensor, withScalar}), scriptCall(std::string("torch.") + name), std::move(onnx)};
}

OpRun clamp(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const auto low = a.optionalNumber(1), high = a.optionalNumber(2);
  const c10::optional<at::Scalar> min = low ? c10::optional<at::Scalar>(*low) : c10::nullopt;
  const c10::optional<at::Scalar> max = high ? c10::optional<at::Scalar>(*high) : c10::nullopt;
  return [=](GraphFrame& f) -> c10::IValue { return at::clamp(T(f, x), min, max); };
}

std::string clampScript(const GraphNode& n, const ScriptArgs& a) {
  return "torch.clamp(" + a[0] + ", " + (isNullArg(n, 1) ? a[1] : scriptReal(n.args[1])) + ", " +
         (isNullArg(n, 2) ? a[2] : scriptReal(n.args[2])) + ")";
}

OpRun maskedFill(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t x = a.tensor(0), mask = a.tensor(1);
  const at::Scalar value = scalarAt(a, 2);
  return [=](GraphFrame& f) -> c10::IValue { return T(f, x).masked_fill(T(f, mask), value); };
}

OpRun toDtype(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const auto dtype = dtypeNamed(a.text(1), a.node().op);
  return [=](GraphFrame& f) -> c10::IValue { return T(f, x).to(dtype); };
}

OpRun typeAs(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0), other = a.tensor(1);
  return [=](GraphFrame& f) -> c10::IValue { return T(f, x).type_as(T(f, other)); };
}

std::string asBool(const OnnxOp& o, size_t i) { return o.operand(i, at::kBool); }

OnnxValue clampOnnx(const OnnxOp& o) {
  const at::ScalarType type = o.resultType();
  const auto bound = [&](size_t i) { return isNullArg(o.args.node(), i) ? std::string() : o.operand(i, type); };
  return {o.b.op("Clip", {o.operand(0, type), bound(1), bound(2)})};
}

OnnxValue maskedFillOnnx(const OnnxOp& o) {
  return {o.b.op("Where", {asBool(o, 1), o.operand(2, o.resultType()), o.tensor(0)})};
}

OnnxForm triangleOnnx(bool upper) {
  return [upper](const OnnxOp& o) -> OnnxValue {
    return {o.b.op("Trilu", {o.tensor(0), o.b.ints({o.constant(1)})}, {{"upper", int64_t{upper ? 1 : 0}}})};
  };
}

OnnxValue castOnnx(const OnnxOp& o) { return {o.b.cast(o.tensor(0), o.resultType())}; }

OnnxValue rsqrtOnnx(const OnnxOp& o) { return {o.b.op("Reciprocal", {o.b.op("Sqrt", {o.tensor(0)})})}; }

}  // namespace

OpRows elementwiseOps() {
  return {
      torchUnary("exp", at::exp, onnxUnary("Exp")),
      torchUnary("log", at::log, onnxUnary("Log")),
      torchUnary("sqrt", at::sqrt, onnxUnary("Sqrt")),
      torchUnary("rsqrt", at::rsqrt, rsqrtOnnx),
      torchUnary("abs", at::abs, onnxUnary("Abs")),
      torchUnary("sin", at::sin, onnxUnary("Sin")),
      torchUnary("cos", at::cos, onnxUnary("Cos")),
      {"logicalNot", unaryOp([](const at::Tensor& x) { return at::logical_not(x); }), scriptCall("torch.logical_not"),
       [](const OnnxOp& o) -> OnnxValue { return {o.b.op("Not", {asBool(o, 0)})}; }},
      {"detach", unaryOp([](const at::Tensor& x) { return x.detach(); }), scriptMethod("detach"),
       [](const OnnxOp& o) -> OnnxValue { return {o.tensor(0)}; }},
      {"clamp", clamp, clampScript, clampOnnx},
      {"maskedFill", maskedFill, scriptCall("torch.masked_fill"), maskedFillOnnx},
      {"tril", alongDim([](const at::Tensor& x, int64_t d) { return x.tril(d); }), scriptCall("torch.tril"),
       triangleOnnx(false)},
      {"triu", alongDim([](const at::Tensor& x, int64_t d) { return x.triu(d); }), scriptCall("torch.triu"),
       triangleOnnx(true)},
      comparison("eq", at::eq, at::eq, comparisonOnnx("Equal", false)),
      comparison("ne", at::ne, at::ne, comparisonOnnx("Equal", true)),
      comparison("lt", at::lt, at::lt, comparisonOnnx("Less", false)),
      comparison("le", at::le, at::le, comparisonOnnx("LessOrEqual", false)),
      comparison("gt", at::gt, at::gt, comparisonOnnx("Greater", false)),
      comparison("ge", at::ge, at::ge, comparisonOnnx("GreaterOrEqual", false)),
      {"toDtype", toDtype,
       [](const GraphNode& n, const ScriptArgs& a) { return a[0] + ".to(" + scriptDtype(n.args[1]) + ")"; }, castOnnx},
      {"typeAs", typeAs, scriptMethod("type_as"), castOnnx},
  };
}

}  // namespace firebrand
