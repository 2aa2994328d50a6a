// Pieces and picks: splitting a tensor into a list, items of that list,
// slices, and elements selected or gathered by index.
#include <ATen/Functions.h>

#include <limits>

#include "core/errors.h"
#include "core/graph/op_support.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

// x.fn(dim, index) for an op (x, dim, index tensor).
template <typename Fn>
OpCompile byIndex(Fn fn) {
  return [fn](const NodeArgs& a) -> OpRun {
    a.expectCount(3);
    const int64_t x = a.tensor(0);
    const int64_t dim = a.integer(1).value;
    const int64_t index = a.tensor(2);
    return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x), dim, T(f, index)); };
  };
}

OpRun listItem(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t list = a.tensor(0);
  const int64_t index = a.integer(1).value;
  return [=](GraphFrame& f) -> c10::IValue { return f.values[list].toTensorList().get(index); };
}

OpRun splitWithSizes(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const auto sizes = a.integers(1);
  const int64_t dim = a.integer(2).value;
  return [=](GraphFrame& f) -> c10::IValue {
    return c10::List<at::Tensor>(T(f, x).split_with_sizes(intValues(sizes, f), dim));
  };
}

// torch.split with an int size: forward destructured `count` pieces, which must be all there are.
OpRun splitSize(const NodeArgs& a) {
  a.expectCount(4);
  const int64_t x = a.tensor(0);
  const int64_t size = a.integer(1).value, dim = a.integer(2).value, count = a.integer(3).value;
  return [=](GraphFrame& f) -> c10::IValue {
    auto pieces = T(f, x).split(size, dim);
    if (static_cast<int64_t>(pieces.size()) != count) {
      throw ShapeMismatch("split(" + std::to_string(size) + ", " + std::to_string(dim) + ") of " + shapeText(T(f, x)) +
                          " gives " + std::to_string(pieces.size()) + " pieces, but forward took " +
                          std::to_string(count));
    }
    return c10::List<at::Tensor>(pieces);
  };
}

OpRun chunk(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const int64_t chunks = a.integer(1).value, dim = a.integer(2).value;
  return [=](GraphFrame& f) -> c10::IValue {
    auto pieces = T(f, x).chunk(chunks, dim);
    if (static_cast<int64_t>(pieces.size()) != chunks) {
      throw ShapeMismatch("chunk(" + std::to_string(chunks) + ") gave " + std::to_string(pieces.size()) +
                          " pieces: the dimension's size is below the number of chunks");
    }
    return c10::List<at::Tensor>(pieces);
  };
}

// A sequence's length of positions (a table's rows) continues after the cached ones.
OpRun narrow(const NodeArgs& a) {
  a.expectCount(4);
  const int64_t x = a.tensor(0);
  const int64_t dim = a.integer(1).value;
  const IntArg start = a.integer(2), length = a.integer(3);
  return [=](GraphFrame& f) -> c10::IValue {
    const int64_t shift = f.cache ? f.cache->positionShift(length.slot) : 0;
    return T(f, x).narrow(dim, start.get(f) + shift, length.get(f));
  };
}

// Up to a sequence's length of positions (table[:T]): continues after the cached ones.
OpRun slice(const NodeArgs& a) {
  a.expectCount(5);
  const int64_t x = a.tensor(0);
  const int64_t dim = a.integer(1).value;
  const auto start = a.optionalInteger(2), end = a.optionalInteger(3);
  const int64_t step = a.integer(4).value;
  return [=](GraphFrame& f) -> c10::IValue {
    const int64_t shift = f.cache && end ? f.cache->positionShift(end->slot) : 0;
    if (shift > 0) return T(f, x).slice(dim, (start ? start->get(f) : 0) + shift, end->get(f) + shift, step);
    return T(f, x).slice(dim, start ? c10::optional<int64_t>(start->get(f)) : c10::nullopt,
                         end ? c10::optional<int64_t>(end->get(f)) : c10::nullopt, step);
  };
}

OpRun select(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const int64_t dim = a.integer(1).value;
  const IntArg index = a.integer(2);
  return [=](GraphFrame& f) -> c10::IValue { return T(f, x).select(dim, index.get(f)); };
}

// x's size along `dim` as a 1-D int64 of one element.
std::string dimSize(const OnnxOp& o, int64_t dim) { return o.b.shape(o.tensor(0), dim, dim + 1); }

OnnxValue splitOnnx(const OnnxOp& o, const std::string& sizes, int64_t dim, size_t pieces) {
  return o.b.add("Split", {o.tensor(0), sizes}, {{"axis", dim}}, pieces);
}

OnnxValue splitWithSizesOnnx(const OnnxOp& o) {
  return splitOnnx(o, o.integers(1), normalizedDim(o.constant(2), o.rank(0)), o.args.integers(1).size());
}

// Pieces of `size` along dim, the last one what remains.
OnnxValue splitSizeOnnx(const OnnxOp& o) {
  const int64_t size = o.constant(1), dim = normalizedDim(o.constant(2), o.rank(0)), count = o.constant(3);
  const std::string last = o.b.op("Sub", {dimSize(o, dim), o.b.ints({size * (count - 1)})});
  const std::string sizes =
      o.b.op("Concat", {o.b.ints(std::vector<int64_t>(count - 1, size)), last}, {{"axis", int64_t{0}}});
  return splitOnnx(o, sizes, dim, count);
}

// chunk: pieces of ceil(n / chunks), the last one what remains (as PyTorch splits).
OnnxValue chunkOnnx(const OnnxOp& o) {
  OnnxBuilder& b = o.b;
  const int64_t chunks = o.constant(1), dim = normalizedDim(o.constant(2), o.rank(0));
  const std::string n = dimSize(o, dim);
  const std::string size = b.op("Div", {b.op("Add", {n, b.ints({chunks - 1})}), b.ints({chunks})});
  std::vector<std::string> sizes(chunks - 1, size);
  sizes.push_back(b.op("Sub", {n, b.op("Mul", {size, b.ints({chunks - 1})})}));
  return splitOnnx(o, b.op("Concat", sizes, {{"axis", int64_t{0}}}), dim, chunks);
}

OnnxValue listItemOnnx(const OnnxOp& o) {
  const OnnxValue& list = o.value(0);
  int64_t index = o.constant(1);
  if (index < 0) index += static_cast<int64_t>(list.size());
  return {list.at(index)};
}

// One traced or constant integer as a 1-D int64 of one element.
std::string oneInteger(const OnnxOp& o, size_t i) { return o.b.unsqueeze(o.integer(i), {0}); }

OnnxValue narrowOnnx(const OnnxOp& o) {
  const int64_t dim = normalizedDim(o.constant(1), o.rank(0));
  const std::string start = oneInteger(o, 2);
  const std::string end = o.b.op("Add", {start, oneInteger(o, 3)});
  return {o.b.op("Slice", {o.tensor(0), start, end, o.b.ints({dim})})};
}

OnnxValue sliceOnnx(const OnnxOp& o) {
  const int64_t dim = normalizedDim(o.constant(1), o.rank(0));
  const auto bound = [&](size_t i, int64_t none) {
    return isNullArg(o.args.node(), i) ? o.b.ints({none}) : oneInteger(o, i);
  };
  return {o.b.op("Slice", {o.tensor(0), bound(2, 0), bound(3, std::numeric_limits<int64_t>::max()), o.b.ints({dim}),
                           o.b.ints({o.constant(4)})})};
}

OnnxValue selectOnnx(const OnnxOp& o) {
  return {o.b.op("Gather", {o.tensor(0), o.integer(2)}, {{"axis", normalizedDim(o.constant(1), o.rank(0))}})};
}

OnnxForm byIndexOnnx(const char* opType) {
  return [opType](const OnnxOp& o) -> OnnxValue {
    return {o.b.op(opType, {o.tensor(0), o.tensor(2)}, {{"axis", normalizedDim(o.constant(1), o.rank(0))}})};
  };
}

}  // namespace

OpRows pieceOps() {
  return {
      {"splitWithSizes", splitWithSizes, scriptCall("torch.split_with_sizes"), splitWithSizesOnnx},
      {"splitSize", splitSize,
       [](const GraphNode&, const ScriptArgs& a) { return "torch.split(" + a[0] + ", " + a[1] + ", " + a[2] + ")"; },
       splitSizeOnnx},
      {"chunk", chunk, scriptCall("torch.chunk"), chunkOnnx},
      {"listItem", listItem, [](const GraphNode&, const ScriptArgs& a) { return a[0] + "[" + a[1] + "]"; },
       listItemOnnx},
      {"narrow", narrow, scriptCall("torch.narrow"), narrowOnnx},
      {"slice", slice, scriptCall("torch.ops.aten.slice"), sliceOnnx},
      {"select", select, scriptCall("torch.select"), selectOnnx},
      {"indexSelect", byIndex([](const at::Tensor& x, int64_t d, const at::Tensor& i) { return x.index_select(d, i); }),
       scriptCall("torch.index_select"), byIndexOnnx("Gather")},
      {"gather", byIndex([](const at::Tensor& x, int64_t d, const at::Tensor& i) { return x.gather(d, i); }),
       scriptCall("torch.gather"), byIndexOnnx("GatherElements")},
  };
}

}  // namespace firebrand
