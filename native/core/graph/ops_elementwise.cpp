// Elementwise math, comparisons (bool tensors), masks and dtype changes.
#include <ATen/Functions.h>

#include "core/graph/op_support.h"

namespace firebrand {
namespace {

OpRow comparison(const char* name, at::Tensor (*withTensor)(const at::Tensor&, const at::Tensor&),
                 at::Tensor (*withScalar)(const at::Tensor&, const at::Scalar&)) {
  struct Both {
    decltype(withTensor) tensor;
    decltype(withScalar) scalar;
    at::Tensor operator()(const at::Tensor& x, const at::Tensor& y) const { return tensor(x, y); }
    at::Tensor operator()(const at::Tensor& x, const at::Scalar& y) const { return scalar(x, y); }
  };
  return {name, binaryOp(Both{withTensor, withScalar}), scriptCall(std::string("torch.") + name)};
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

}  // namespace

OpRows elementwiseOps() {
  return {
      torchUnary("exp", at::exp),
      torchUnary("log", at::log),
      torchUnary("sqrt", at::sqrt),
      torchUnary("rsqrt", at::rsqrt),
      torchUnary("abs", at::abs),
      torchUnary("sin", at::sin),
      torchUnary("cos", at::cos),
      {"logicalNot", unaryOp([](const at::Tensor& x) { return at::logical_not(x); }), scriptCall("torch.logical_not")},
      {"detach", unaryOp([](const at::Tensor& x) { return x.detach(); }), scriptMethod("detach")},
      {"clamp", clamp, clampScript},
      {"maskedFill", maskedFill, scriptCall("torch.masked_fill")},
      {"tril", alongDim([](const at::Tensor& x, int64_t d) { return x.tril(d); }), scriptCall("torch.tril")},
      {"triu", alongDim([](const at::Tensor& x, int64_t d) { return x.triu(d); }), scriptCall("torch.triu")},
      comparison("eq", at::eq, at::eq),
      comparison("ne", at::ne, at::ne),
      comparison("lt", at::lt, at::lt),
      comparison("le", at::le, at::le),
      comparison("gt", at::gt, at::gt),
      comparison("ge", at::ge, at::ge),
      {"toDtype", toDtype,
       [](const GraphNode& n, const ScriptArgs& a) { return a[0] + ".to(" + scriptDtype(n.args[1]) + ")"; }},
      {"typeAs", typeAs, scriptMethod("type_as")},
  };
}

}  // namespace firebrand
