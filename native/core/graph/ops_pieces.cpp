// Pieces and picks: splitting a tensor into a list, items of that list,
// slices, and elements selected or gathered by index.
#include <ATen/Functions.h>

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

}  // namespace

OpRows pieceOps() {
  return {
      {"splitWithSizes", splitWithSizes, scriptCall("torch.split_with_sizes")},
      {"splitSize", splitSize,
       [](const GraphNode&, const ScriptArgs& a) { return "torch.split(" + a[0] + ", " + a[1] + ", " + a[2] + ")"; }},
      {"chunk", chunk, scriptCall("torch.chunk")},
      {"listItem", listItem, [](const GraphNode&, const ScriptArgs& a) { return a[0] + "[" + a[1] + "]"; }},
      {"narrow", narrow, scriptCall("torch.narrow")},
      {"slice", slice, scriptCall("torch.ops.aten.slice")},
      {"select", select, scriptCall("torch.select")},
      {"indexSelect", byIndex([](const at::Tensor& x, int64_t d, const at::Tensor& i) { return x.index_select(d, i); }),
       scriptCall("torch.index_select")},
      {"gather", byIndex([](const at::Tensor& x, int64_t d, const at::Tensor& i) { return x.gather(d, i); }),
       scriptCall("torch.gather")},
  };
}

}  // namespace firebrand
