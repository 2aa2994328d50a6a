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

OnnxValue reshapeOnnx(const OnnxOp& o) { return {o.b.op("Reshape", {o.tensor(0), o.integers(1)})}; }

OnnxValue permuteOnnx(const OnnxOp& o) {
  return {o.b.op("Transpose", {o.tensor(0)}, {{"perm", onnxAxes(o.constants(1), o.rank(0))}})};
}

// x.expand(sizes): ONNX's Expand broadcasts, so PyTorch's -1 (keep the size) is a 1 there.
OnnxValue expandOnnx(const OnnxOp& o) {
  const auto sizes = o.args.integers(1);
  bool keeps = false;
  for (const IntArg& size : sizes) keeps = keeps || (size.slot < 0 && size.value == -1);
  std::string shape = o.integers(1);
  if (keeps) shape = o.b.op("Abs", {shape});
  return {o.b.op("Expand", {o.tensor(0), shape})};
}

// x.repeat(sizes): Tile, after the leading dims repeat adds when it gets more sizes than x has dims.
OnnxValue repeatOnnx(const OnnxOp& o) {
  const int64_t added = static_cast<int64_t>(o.args.integers(1).size()) - o.rank(0);
  std::string x = o.tensor(0);
  if (added > 0) {
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < added; ++d) axes.push_back(d);
    x = o.b.unsqueeze(x, axes);
  }
  return {o.b.op("Tile", {x, o.integers(1)})};
}

OnnxValue expandAsOnnx(const OnnxOp& o) { return {o.b.op("Expand", {o.tensor(0), o.b.shape(o.tensor(1))})}; }

// x's shape with dims [start, end] replaced by `middle`.
std::string replacedDims(const OnnxOp& o, int64_t start, int64_t end, const std::string& middle) {
  const std::string x = o.tensor(0);
  return o.b.op("Concat", {o.b.shape(x, 0, start), middle, o.b.shape(x, end + 1)}, {{"axis", int64_t{0}}});
}

OnnxValue flattenOnnx(const OnnxOp& o) {
  const int64_t rank = o.rank(0);
  if (rank == 0) return {o.b.op("Reshape", {o.tensor(0), o.b.ints({1})})};
  const int64_t start = normalizedDim(o.constant(1), rank), end = normalizedDim(o.constant(2), rank);
  return {o.b.op("Reshape", {o.tensor(0), replacedDims(o, start, end, o.b.ints({-1}))})};
}

OnnxValue transposeOnnx(const OnnxOp& o) {
  const int64_t rank = o.rank(0);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
  std::swap(perm[normalizedDim(o.constant(1), rank)], perm[normalizedDim(o.constant(2), rank)]);
  return {o.b.op("Transpose", {o.tensor(0)}, {{"perm", perm}})};
}

OnnxValue unflattenOnnx(const OnnxOp& o) {
  const int64_t dim = normalizedDim(o.constant(1), o.rank(0));
  return {o.b.op("Reshape", {o.tensor(0), replacedDims(o, dim, dim, o.integers(2))})};
}

OnnxValue unsqueezeOnnx(const OnnxOp& o) {
  return {o.b.unsqueeze(o.tensor(0), {normalizedDim(o.constant(1), o.rank(0) + 1)})};
}

// squeeze drops only dims of size 1: which ones, the example says (its dynamic axes should not be 1).
OnnxValue squeezeOnnx(const OnnxOp& o) {
  const at::Tensor& x = o.example(0);
  std::vector<int64_t> axes;
  if (isNullArg(o.args.node(), 1)) {
    for (int64_t d = 0; d < x.dim(); ++d)
      if (x.size(d) == 1) axes.push_back(d);
  } else if (x.dim() > 0) {
    const int64_t dim = normalizedDim(o.constant(1), x.dim());
    if (x.size(dim) == 1) axes.push_back(dim);
  }
  if (axes.empty()) return {o.tensor(0)};
  return {o.b.squeeze(o.tensor(0), axes)};
}

OnnxValue sameOnnx(const OnnxOp& o) { return {o.tensor(0)}; }

}  // namespace

OpRows shapeOps() {
  using Sizes = at::IntArrayRef;
  return {
      {"reshape", withSizes([](const at::Tensor& x, Sizes s) { return x.reshape(s); }), scriptMethod("reshape"),
       reshapeOnnx},
      {"view", withSizes([](const at::Tensor& x, Sizes s) { return x.view(s); }), scriptMethod("view"), reshapeOnnx},
      {"permute", withSizes([](const at::Tensor& x, Sizes s) { return x.permute(s); }), scriptMethod("permute"),
       permuteOnnx},
      {"expand", withSizes([](const at::Tensor& x, Sizes s) { return x.expand(s); }), scriptMethod("expand"),
       expandOnnx},
      {"repeat", withSizes([](const at::Tensor& x, Sizes s) { return x.repeat(s); }), scriptMethod("repeat"),
       repeatOnnx},
      {"expandAs", expandAs, scriptMethod("expand_as"), expandAsOnnx},
      {"flatten", withTwoConstants([](const at::Tensor& x, int64_t s, int64_t e) { return x.flatten(s, e); }),
       scriptCall("torch.flatten"), flattenOnnx},
      {"transpose", withTwoConstants([](const at::Tensor& x, int64_t a, int64_t b) { return x.transpose(a, b); }),
       scriptCall("torch.transpose"), transposeOnnx},
      {"unflatten", unflatten,
       [](const GraphNode& n, const ScriptArgs& a) {
         return a[0] + ".unflatten(" + a[1] + ", " + scriptDims(n.args[2]) + ")";
       },
       unflattenOnnx},
      {"unsqueeze", alongDim([](const at::Tensor& x, int64_t d) { return x.unsqueeze(d); }),
       scriptCall("torch.unsqueeze"), unsqueezeOnnx},
      {"squeeze", squeeze,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.squeeze(" + a[0] + (isNullArg(n, 1) ? "" : ", " + a[1]) + ")";
       },
       squeezeOnnx},
      {"contiguous", unaryOp([](const at::Tensor& x) { return x.contiguous(); }), scriptMethod("contiguous"), sameOnnx},
  };
}

}  // namespace firebrand
