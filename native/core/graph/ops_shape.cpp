// Shapes: views and copies that rearrange a tensor's dimensions.
#include <ATen/Functions.h>

#include "core/graph/op_support.h"

namespace firebrand {
namespace {

// x.fn(sizes) for an op (x, sizes) whose sizes may be traced.
template <typename Fn>
OpCompile withSizes(Fn fn) {
  return [fn](const NodeArgs& a) -> OpRun {
    a.expectCount(2);
    const int64_t x = a.tensor(0);
    const auto sizes = a.integers(1);
    return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x), intValues(sizes, f)); };
  };
}

// x.fn(d0, d1) for an op (x, d0, d1) of two constants.
template <typename Fn>
OpCompile withTwoConstants(Fn fn) {
  return [fn](const NodeArgs& a) -> OpRun {
    a.expectCount(3);
    const int64_t x = a.tensor(0);
    const int64_t first = a.integer(1).value, second = a.integer(2).value;
    return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x), first, second); };
  };
}

OpRun unflatten(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const int64_t dim = a.integer(1).value;
  const auto sizes = a.integers(2);
  return [=](GraphFrame& f) -> c10::IValue { return T(f, x).unflatten(dim, intValues(sizes, f)); };
}

OpRun squeeze(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const auto dim = a.optionalInteger(1);
  return [=](GraphFrame& f) -> c10::IValue { return dim ? T(f, x).squeeze(dim->value) : T(f, x).squeeze(); };
}

OpRun expandAs(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0), y = a.tensor(1);
  return [=](GraphFrame& f) -> c10::IValue { return T(f, x).expand_as(T(f, y)); };
}

}  // namespace

OpRows shapeOps() {
  using Sizes = at::IntArrayRef;
  return {
      {"reshape", withSizes([](const at::Tensor& x, Sizes s) { return x.reshape(s); }), scriptMethod("reshape")},
      {"view", withSizes([](const at::Tensor& x, Sizes s) { return x.view(s); }), scriptMethod("view")},
      {"permute", withSizes([](const at::Tensor& x, Sizes s) { return x.permute(s); }), scriptMethod("permute")},
      {"expand", withSizes([](const at::Tensor& x, Sizes s) { return x.expand(s); }), scriptMethod("expand")},
      {"repeat", withSizes([](const at::Tensor& x, Sizes s) { return x.repeat(s); }), scriptMethod("repeat")},
      {"expandAs", expandAs, scriptMethod("expand_as")},
      {"flatten", withTwoConstants([](const at::Tensor& x, int64_t s, int64_t e) { return x.flatten(s, e); }),
       scriptCall("torch.flatten")},
      {"transpose", withTwoConstants([](const at::Tensor& x, int64_t a, int64_t b) { return x.transpose(a, b); }),
       scriptCall("torch.transpose")},
      {"unflatten", unflatten,
       [](const GraphNode& n, const ScriptArgs& a) {
         return a[0] + ".unflatten(" + a[1] + ", " + scriptDims(n.args[2]) + ")";
       }},
      {"unsqueeze", alongDim([](const at::Tensor& x, int64_t d) { return x.unsqueeze(d); }),
       scriptCall("torch.unsqueeze")},
      {"squeeze", squeeze,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.squeeze(" + a[0] + (isNullArg(n, 1) ? "" : ", " + a[1]) + ")";
       }},
      {"contiguous", unaryOp([](const at::Tensor& x) { return x.contiguous(); }), scriptMethod("contiguous")},
  };
}

}  // namespace firebrand
