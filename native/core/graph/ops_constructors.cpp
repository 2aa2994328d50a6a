// Building tensors: joining a list, choosing by a condition, and new tensors
// on the model's device (the exported module's: its input's).
#include <ATen/Functions.h>

#include "core/graph/op_support.h"

namespace firebrand {
namespace {

OpCompile joined(bool stack) {
  return [stack](const NodeArgs& a) -> OpRun {
    a.expectCount(2);
    const auto xs = a.tensors(0);
    const int64_t dim = a.integer(1).value;
    return [=](GraphFrame& f) -> c10::IValue {
      std::vector<at::Tensor> tensors;
      tensors.reserve(xs.size());
      for (const auto slot : xs) tensors.push_back(T(f, slot));
      return stack ? at::stack(tensors, dim) : at::cat(tensors, dim);
    };
  };
}

at::Tensor whereOf(const at::Tensor& condition, const c10::IValue& x, const c10::IValue& y) {
  if (x.isTensor() && y.isTensor()) return at::where(condition, x.toTensor(), y.toTensor());
  if (x.isTensor()) return at::where(condition, x.toTensor(), y.toScalar());
  if (y.isTensor()) return at::where(condition, x.toScalar(), y.toTensor());
  return at::where(condition, x.toScalar(), y.toScalar());
}

OpRun where(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t condition = a.tensor(0);
  const Operand x = operand(a, 1), y = operand(a, 2);
  return [=](GraphFrame& f) -> c10::IValue { return whereOf(T(f, condition), operandValue(f, x), operandValue(f, y)); };
}

// Positions up to the sequence's length continue after the cached ones.
OpRun arange(const NodeArgs& a) {
  a.expectCount(4);
  const IntArg start = a.integer(0), end = a.integer(1);
  const at::Scalar step = scalarAt(a, 2);
  const auto dtype = dtypeNamed(a.text(3), "arange");
  return [=](GraphFrame& f) -> c10::IValue {
    const int64_t shift = f.cache ? f.cache->positionShift(end.slot) : 0;
    return at::arange(at::Scalar(start.get(f) + shift), at::Scalar(end.get(f) + shift), step,
                      at::TensorOptions().dtype(dtype).device(f.device));
  };
}

OpRun fullLike(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const at::Scalar value = scalarAt(a, 1);
  return [=](GraphFrame& f) -> c10::IValue { return at::full_like(T(f, x), value); };
}

OpRun full(const NodeArgs& a) {
  a.expectCount(3);
  const auto size = a.integers(0);
  const at::Scalar value = scalarAt(a, 1);
  const auto dtype = dtypeNamed(a.text(2), "full");
  return [=](GraphFrame& f) -> c10::IValue {
    return at::full(intValues(size, f), value, at::TensorOptions().dtype(dtype).device(f.device));
  };
}

OnnxForm joinedOnnx(bool stack) {
  return [stack](const OnnxOp& o) -> OnnxValue {
    const at::ScalarType type = o.resultType();
    const int64_t axis = normalizedDim(o.constant(1), o.resultRank());
    std::vector<std::string> parts;
    const auto slots = o.args.tensors(0);
    const auto names = o.tensors(0);
    for (size_t i = 0; i < names.size(); ++i) {
      std::string part = names[i];
      if (o.exampleOf(slots[i]).toTensor().scalar_type() != type) part = o.b.cast(part, type);
      parts.push_back(stack ? o.b.unsqueeze(part, {axis}) : part);
    }
    return {o.b.op("Concat", parts, {{"axis", axis}})};
  };
}

OnnxValue whereOnnx(const OnnxOp& o) {
  const at::ScalarType type = o.resultType();
  return {o.b.op("Where", {o.operand(0, at::kBool), o.operand(1, type), o.operand(2, type)})};
}

// A traced or constant integer argument as a 0-d value of `type`.
std::string numberAs(const OnnxOp& o, size_t i, at::ScalarType type) {
  if (o.args.isTensor(i)) return o.b.cast(o.integer(i), type);
  return o.b.scalar(o.args.number(i), type);
}

OnnxValue arangeOnnx(const OnnxOp& o) {
  const at::ScalarType type = o.resultType();
  return {o.b.op("Range", {numberAs(o, 0, type), numberAs(o, 1, type), o.b.scalar(o.args.number(2), type)})};
}

OnnxValue fullLikeOnnx(const OnnxOp& o) {
  return {o.b.op("Expand", {o.b.scalar(o.args.number(1), o.resultType()), o.b.shape(o.tensor(0))})};
}

OnnxValue fullOnnx(const OnnxOp& o) {
  return {o.b.op("Expand", {o.b.scalar(o.args.number(1), o.resultType()), o.integers(0)})};
}

}  // namespace

OpRows constructorOps() {
  return {
      {"cat", joined(false), scriptCall("torch.cat"), joinedOnnx(false)},
      {"stack", joined(true), scriptCall("torch.stack"), joinedOnnx(true)},
      {"where", where, scriptCall("torch.where"), whereOnnx},
      {"arange", arange,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.arange(" + a[0] + ", " + a[1] + ", " + a[2] + ", dtype=" + scriptDtype(n.args[3]) +
                ", device=input.device)";
       },
       arangeOnnx},
      {"fullLike", fullLike, scriptCall("torch.full_like"), fullLikeOnnx},
      {"full", full,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.full(" + a[0] + ", " + a[1] + ", dtype=" + scriptDtype(n.args[2]) + ", device=input.device)";
       },
       fullOnnx},
  };
}

}  // namespace firebrand
