#include "core/nn/graph_ops.h"

#include <ATen/Functions.h>

#include <unordered_map>

#include "core/errors.h"
#include "core/shape_text.h"
#include "core/nn/attention.h"

namespace firebrand {
namespace {

using Builder = OpRun (*)(const NodeArgs&);

const at::Tensor& T(const GraphFrame& frame, int64_t slot) { return frame.values[slot].toTensor(); }

// A tensor or a number (x.add(y) and x.add(1)); integers stay integers, as in PyTorch.
struct Operand {
  int64_t slot = -1;
  at::Scalar scalar;
};

at::Scalar scalarAt(const NodeArgs& a, size_t i) {
  const JsonValue& value = a.node().args.at(i);
  if (const auto* integer = value.integer()) return at::Scalar(*integer);
  return at::Scalar(a.number(i));
}

Operand operand(const NodeArgs& a, size_t i) {
  if (a.isTensor(i)) return {a.tensor(i), at::Scalar()};
  return {-1, scalarAt(a, i)};
}

c10::optional<at::Tensor> optionalT(const GraphFrame& frame, const std::optional<int64_t>& slot) {
  if (!slot) return c10::nullopt;
  return T(frame, *slot);
}

// dims given as one integer, a list, or null (every dimension).
std::vector<int64_t> dimsOf(const std::optional<std::vector<IntArg>>& dims, const GraphFrame& frame) {
  return dims ? intValues(*dims, frame) : std::vector<int64_t>{};
}

template <typename Fn>
OpRun unary(const NodeArgs& a, Fn fn) {
  a.expectCount(1);
  const int64_t x = a.tensor(0);
  return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x)); };
}

#define UNARY(NAME, EXPR) \
  {NAME, [](const NodeArgs& a) { return unary(a, [](const at::Tensor& x) { return EXPR; }); }}

// x op y where y is a tensor or a number.
#define BINARY(NAME, EXPR)                                                                   \
  {NAME, [](const NodeArgs& a) -> OpRun {                                                   \
     a.expectCount(2);                                                                      \
     const int64_t xs = a.tensor(0);                                                        \
     const Operand y = operand(a, 1);                                                       \
     if (y.slot >= 0) {                                                                     \
       const int64_t ys = y.slot;                                                           \
       return [=](GraphFrame& f) -> c10::IValue { const auto& x = T(f, xs); const auto& other = T(f, ys); return EXPR; }; \
     }                                                                                      \
     const at::Scalar other = y.scalar;                                                     \
     return [=](GraphFrame& f) -> c10::IValue { const auto& x = T(f, xs); return EXPR; };   \
   }}

OpRun addLike(const NodeArgs& a, bool subtract) {
  a.expectCount(3);
  const int64_t xs = a.tensor(0);
  const Operand y = operand(a, 1);
  const at::Scalar alpha = scalarAt(a, 2);
  if (y.slot >= 0) {
    const int64_t ys = y.slot;
    return [=](GraphFrame& f) -> c10::IValue { return subtract ? at::sub(T(f, xs), T(f, ys), alpha) : at::add(T(f, xs), T(f, ys), alpha); };
  }
  const at::Scalar other = y.scalar;
  return [=](GraphFrame& f) -> c10::IValue { return subtract ? at::sub(T(f, xs), other, alpha) : at::add(T(f, xs), other, alpha); };
}

OpRun reduction(const NodeArgs& a, bool mean) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const auto dims = a.optionalIntegers(1);
  const bool keepdim = a.flag(2);
  return [=](GraphFrame& f) -> c10::IValue {
    if (!dims) return mean ? T(f, x).mean() : T(f, x).sum();
    const auto values = intValues(*dims, f);
    return mean ? T(f, x).mean(values, keepdim) : T(f, x).sum(values, keepdim);
  };
}

OpRun extremum(const NodeArgs& a, bool maximum) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const auto dims = a.integers(1);
  const bool keepdim = a.flag(2);
  return [=](GraphFrame& f) -> c10::IValue {
    const auto values = intValues(dims, f);
    return maximum ? T(f, x).amax(values, keepdim) : T(f, x).amin(values, keepdim);
  };
}

OpRun extremumWithIndex(const NodeArgs& a, bool maximum) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const IntArg dim = a.integer(1);
  const bool keepdim = a.flag(2);
  return [=](GraphFrame& f) -> c10::IValue {
    auto [values, indices] = maximum ? T(f, x).max(dim.get(f), keepdim) : T(f, x).min(dim.get(f), keepdim);
    return c10::List<at::Tensor>({values, indices});
  };
}

OpRun argExtremum(const NodeArgs& a, bool maximum) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const auto dim = a.optionalInteger(1);
  const bool keepdim = a.flag(2);
  return [=](GraphFrame& f) -> c10::IValue {
    const auto d = dim ? c10::optional<int64_t>(dim->get(f)) : c10::nullopt;
    return maximum ? T(f, x).argmax(d, keepdim) : T(f, x).argmin(d, keepdim);
  };
}

OpRun spread(const NodeArgs& a, bool standardDeviation) {
  a.expectCount(4);
  const int64_t x = a.tensor(0);
  const auto dims = a.optionalIntegers(1);
  const int64_t correction = a.integer(2).value;
  const bool keepdim = a.flag(3);
  return [=](GraphFrame& f) -> c10::IValue {
    const auto list = dimsOf(dims, f);
    const at::OptionalIntArrayRef dimRef = dims ? at::OptionalIntArrayRef(list) : at::OptionalIntArrayRef();
    return standardDeviation ? at::std(T(f, x), dimRef, correction, keepdim) : at::var(T(f, x), dimRef, correction, keepdim);
  };
}

OpRun shapeOp(const NodeArgs& a, bool view) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const auto shape = a.integers(1);
  return [=](GraphFrame& f) -> c10::IValue {
    const auto sizes = intValues(shape, f);
    return view ? T(f, x).view(sizes) : T(f, x).reshape(sizes);
  };
}

OpRun compare(const NodeArgs& a, at::Tensor (*withTensor)(const at::Tensor&, const at::Tensor&),
              at::Tensor (*withScalar)(const at::Tensor&, const at::Scalar&)) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const Operand y = operand(a, 1);
  if (y.slot >= 0) {
    const int64_t ys = y.slot;
    return [=](GraphFrame& f) -> c10::IValue { return withTensor(T(f, x), T(f, ys)); };
  }
  const at::Scalar other = y.scalar;
  return [=](GraphFrame& f) -> c10::IValue { return withScalar(T(f, x), other); };
}

// torch.cat / torch.stack of a list of tensors along dim.
// Convolution and pooling over N spatial dimensions: sizes are lists of N constants.
template <int N>
OpRun convolution(const NodeArgs& a) {
  a.expectCount(7);
  const int64_t x = a.tensor(0), w = a.tensor(1);
  const auto b = a.optionalTensor(2);
  const GraphFrame none;
  const auto stride = intValues(a.integers(3), none), padding = intValues(a.integers(4), none), dilation = intValues(a.integers(5), none);
  const int64_t groups = a.integer(6).value;
  return [=](GraphFrame& f) -> c10::IValue {
    if constexpr (N == 1) return at::conv1d(T(f, x), T(f, w), optionalT(f, b), stride, padding, dilation, groups);
    if constexpr (N == 2) return at::conv2d(T(f, x), T(f, w), optionalT(f, b), stride, padding, dilation, groups);
    if constexpr (N == 3) return at::conv3d(T(f, x), T(f, w), optionalT(f, b), stride, padding, dilation, groups);
  };
}

template <int N>
OpRun maxPool(const NodeArgs& a) {
  a.expectCount(6);
  const int64_t x = a.tensor(0);
  const GraphFrame none;
  const auto kernel = intValues(a.integers(1), none), stride = intValues(a.integers(2), none), padding = intValues(a.integers(3), none),
             dilation = intValues(a.integers(4), none);
  const bool ceil = a.flag(5);
  return [=](GraphFrame& f) -> c10::IValue {
    if constexpr (N == 1) return at::max_pool1d(T(f, x), kernel, stride, padding, dilation, ceil);
    if constexpr (N == 2) return at::max_pool2d(T(f, x), kernel, stride, padding, dilation, ceil);
    if constexpr (N == 3) return at::max_pool3d(T(f, x), kernel, stride, padding, dilation, ceil);
  };
}

template <int N>
OpRun avgPool(const NodeArgs& a) {
  a.expectCount(6);
  const int64_t x = a.tensor(0);
  const GraphFrame none;
  const auto kernel = intValues(a.integers(1), none), stride = intValues(a.integers(2), none), padding = intValues(a.integers(3), none);
  const bool ceil = a.flag(4), countPad = a.flag(5);
  return [=](GraphFrame& f) -> c10::IValue {
    if constexpr (N == 1) return at::avg_pool1d(T(f, x), kernel, stride, padding, ceil, countPad);
    if constexpr (N == 2) return at::avg_pool2d(T(f, x), kernel, stride, padding, ceil, countPad);
    if constexpr (N == 3) return at::avg_pool3d(T(f, x), kernel, stride, padding, ceil, countPad);
  };
}

template <int N>
OpRun adaptiveAvgPool(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const auto size = intValues(a.integers(1), GraphFrame{});
  return [=](GraphFrame& f) -> c10::IValue {
    if constexpr (N == 1) return at::adaptive_avg_pool1d(T(f, x), size);
    if constexpr (N == 2) return at::adaptive_avg_pool2d(T(f, x), size);
    if constexpr (N == 3) return at::adaptive_avg_pool3d(T(f, x), size);
  };
}

OpRun joined(const NodeArgs& a, bool stack) {
  a.expectCount(2);
  const auto xs = a.tensors(0);
  const int64_t dim = a.integer(1).value;
  return [=](GraphFrame& f) -> c10::IValue {
    std::vector<at::Tensor> tensors;
    tensors.reserve(xs.size());
    for (const auto slot : xs) tensors.push_back(T(f, slot));
    return stack ? at::stack(tensors, dim) : at::cat(tensors, dim);
  };
}

at::Tensor whereOf(const at::Tensor& condition, const c10::IValue& x, const c10::IValue& y) {
  if (x.isTensor() && y.isTensor()) return at::where(condition, x.toTensor(), y.toTensor());
  if (x.isTensor()) return at::where(condition, x.toTensor(), y.toScalar());
  if (y.isTensor()) return at::where(condition, x.toScalar(), y.toTensor());
  return at::where(condition, x.toScalar(), y.toScalar());
}

c10::IValue operandValue(const GraphFrame& f, const Operand& operand) {
  return operand.slot >= 0 ? f.values[operand.slot] : c10::IValue(operand.scalar);
}

const std::unordered_map<std::string, Builder>& table() {
  static const std::unordered_map<std::string, Builder> ops = {
      // Sizes (traced integers).
      {"size", [](const NodeArgs& a) -> OpRun {
         a.expectCount(2);
         const int64_t x = a.tensor(0);
         const int64_t dim = a.integer(1).value;
         const size_t node = a.index();
         return [=](GraphFrame& f) -> c10::IValue {
           const int64_t size = T(f, x).size(dim);
           if (f.cache) f.cache->noteSize(node, size);
           return size;
         };
       }},
      {"intAdd", [](const NodeArgs& a) -> OpRun { const IntArg x = a.integer(0), y = a.integer(1); return [=](GraphFrame& f) -> c10::IValue { return x.get(f) + y.get(f); }; }},
      {"intSub", [](const NodeArgs& a) -> OpRun { const IntArg x = a.integer(0), y = a.integer(1); return [=](GraphFrame& f) -> c10::IValue { return x.get(f) - y.get(f); }; }},
      {"intMul", [](const NodeArgs& a) -> OpRun { const IntArg x = a.integer(0), y = a.integer(1); return [=](GraphFrame& f) -> c10::IValue { return x.get(f) * y.get(f); }; }},
      {"intFloorDiv", [](const NodeArgs& a) -> OpRun {
         const IntArg x = a.integer(0), y = a.integer(1);
         return [=](GraphFrame& f) -> c10::IValue {
           const int64_t d = y.get(f);
           if (d == 0) throw InvalidArgument("integer division by zero");
           const int64_t q = x.get(f) / d;
           return (x.get(f) % d != 0 && ((x.get(f) < 0) != (d < 0))) ? q - 1 : q;
         };
       }},
      {"listItem", [](const NodeArgs& a) -> OpRun {
         a.expectCount(2);
         const int64_t list = a.tensor(0);
         const int64_t index = a.integer(1).value;
         return [=](GraphFrame& f) -> c10::IValue { return f.values[list].toTensorList().get(index); };
       }},
      // Arithmetic.
      {"add", [](const NodeArgs& a) { return addLike(a, false); }},
      {"sub", [](const NodeArgs& a) { return addLike(a, true); }},
      BINARY("mul", at::mul(x, other)),
      BINARY("pow", at::pow(x, other)),
      {"div", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0);
         const Operand y = operand(a, 1);
         const auto mode = a.optionalText(2);
         return [=](GraphFrame& f) -> c10::IValue {
           const c10::optional<c10::string_view> how = mode ? c10::optional<c10::string_view>(*mode) : c10::nullopt;
           return y.slot >= 0 ? at::div(T(f, x), T(f, y.slot), how) : at::div(T(f, x), y.scalar, how);
         };
       }},
      UNARY("neg", x.neg()),
      {"matmul", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0), y = a.tensor(1); return [=](GraphFrame& f) -> c10::IValue { return at::matmul(T(f, x), T(f, y)); }; }},
      {"bmm", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0), y = a.tensor(1); return [=](GraphFrame& f) -> c10::IValue { return at::bmm(T(f, x), T(f, y)); }; }},
      // Reductions.
      {"sum", [](const NodeArgs& a) { return reduction(a, false); }},
      {"mean", [](const NodeArgs& a) { return reduction(a, true); }},
      {"amax", [](const NodeArgs& a) { return extremum(a, true); }},
      {"amin", [](const NodeArgs& a) { return extremum(a, false); }},
      UNARY("maxAll", x.max()),
      UNARY("minAll", x.min()),
      {"maxDim", [](const NodeArgs& a) { return extremumWithIndex(a, true); }},
      {"minDim", [](const NodeArgs& a) { return extremumWithIndex(a, false); }},
      {"argmax", [](const NodeArgs& a) { return argExtremum(a, true); }},
      {"argmin", [](const NodeArgs& a) { return argExtremum(a, false); }},
      {"logsumexp", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0);
         const auto dims = a.integers(1);
         const bool keepdim = a.flag(2);
         return [=](GraphFrame& f) -> c10::IValue { return at::logsumexp(T(f, x), intValues(dims, f), keepdim); };
       }},
      {"var", [](const NodeArgs& a) { return spread(a, false); }},
      {"std", [](const NodeArgs& a) { return spread(a, true); }},
      // Shapes.
      {"reshape", [](const NodeArgs& a) { return shapeOp(a, false); }},
      {"view", [](const NodeArgs& a) { return shapeOp(a, true); }},
      {"flatten", [](const NodeArgs& a) -> OpRun { a.expectCount(3); const int64_t x = a.tensor(0); const int64_t s = a.integer(1).value, e = a.integer(2).value; return [=](GraphFrame& f) -> c10::IValue { return T(f, x).flatten(s, e); }; }},
      {"unflatten", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0);
         const int64_t dim = a.integer(1).value;
         const auto sizes = a.integers(2);
         return [=](GraphFrame& f) -> c10::IValue { return T(f, x).unflatten(dim, intValues(sizes, f)); };
       }},
      {"permute", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const auto dims = a.integers(1); return [=](GraphFrame& f) -> c10::IValue { return T(f, x).permute(intValues(dims, f)); }; }},
      {"transpose", [](const NodeArgs& a) -> OpRun { a.expectCount(3); const int64_t x = a.tensor(0); const int64_t d0 = a.integer(1).value, d1 = a.integer(2).value; return [=](GraphFrame& f) -> c10::IValue { return T(f, x).transpose(d0, d1); }; }},
      {"unsqueeze", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const int64_t d = a.integer(1).value; return [=](GraphFrame& f) -> c10::IValue { return T(f, x).unsqueeze(d); }; }},
      {"squeeze", [](const NodeArgs& a) -> OpRun {
         a.expectCount(2);
         const int64_t x = a.tensor(0);
         const auto dim = a.optionalInteger(1);
         return [=](GraphFrame& f) -> c10::IValue { return dim ? T(f, x).squeeze(dim->value) : T(f, x).squeeze(); };
       }},
      {"expand", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const auto sizes = a.integers(1); return [=](GraphFrame& f) -> c10::IValue { return T(f, x).expand(intValues(sizes, f)); }; }},
      {"expandAs", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0), y = a.tensor(1); return [=](GraphFrame& f) -> c10::IValue { return T(f, x).expand_as(T(f, y)); }; }},
      {"repeat", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const auto sizes = a.integers(1); return [=](GraphFrame& f) -> c10::IValue { return T(f, x).repeat(intValues(sizes, f)); }; }},
      UNARY("contiguous", x.contiguous()),
      {"splitWithSizes", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0);
         const auto sizes = a.integers(1);
         const int64_t dim = a.integer(2).value;
         return [=](GraphFrame& f) -> c10::IValue { return c10::List<at::Tensor>(T(f, x).split_with_sizes(intValues(sizes, f), dim)); };
       }},
      // torch.split with an int size: forward destructured `count` pieces, which must be all there are.
      {"splitSize", [](const NodeArgs& a) -> OpRun {
         a.expectCount(4);
         const int64_t x = a.tensor(0);
         const int64_t size = a.integer(1).value;
         const int64_t dim = a.integer(2).value;
         const int64_t count = a.integer(3).value;
         return [=](GraphFrame& f) -> c10::IValue {
           auto pieces = T(f, x).split(size, dim);
           if (static_cast<int64_t>(pieces.size()) != count) {
             throw ShapeMismatch("split(" + std::to_string(size) + ", " + std::to_string(dim) + ") of " + shapeText(T(f, x)) + " gives " +
                                 std::to_string(pieces.size()) + " pieces, but forward took " + std::to_string(count));
           }
           return c10::List<at::Tensor>(pieces);
         };
       }},
      {"chunk", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0);
         const int64_t chunks = a.integer(1).value;
         const int64_t dim = a.integer(2).value;
         return [=](GraphFrame& f) -> c10::IValue {
           auto pieces = T(f, x).chunk(chunks, dim);
           if (static_cast<int64_t>(pieces.size()) != chunks) {
             throw ShapeMismatch("chunk(" + std::to_string(chunks) + ") gave " + std::to_string(pieces.size()) +
                                 " pieces: the dimension's size is below the number of chunks");
           }
           return c10::List<at::Tensor>(pieces);
         };
       }},
      {"narrow", [](const NodeArgs& a) -> OpRun {
         a.expectCount(4);
         const int64_t x = a.tensor(0);
         const int64_t dim = a.integer(1).value;
         const IntArg start = a.integer(2), length = a.integer(3);
         return [=](GraphFrame& f) -> c10::IValue {
           // A sequence's length of positions (a table's rows) continues after the cached ones.
           const int64_t shift = f.cache ? f.cache->positionShift(length.slot) : 0;
           return T(f, x).narrow(dim, start.get(f) + shift, length.get(f));
         };
       }},
      {"slice", [](const NodeArgs& a) -> OpRun {
         a.expectCount(5);
         const int64_t x = a.tensor(0);
         const int64_t dim = a.integer(1).value;
         const auto start = a.optionalInteger(2), end = a.optionalInteger(3);
         const int64_t step = a.integer(4).value;
         return [=](GraphFrame& f) -> c10::IValue {
           // Up to a sequence's length of positions (table[:T]): continues after the cached ones.
           const int64_t shift = f.cache && end ? f.cache->positionShift(end->slot) : 0;
           if (shift > 0) return T(f, x).slice(dim, (start ? start->get(f) : 0) + shift, end->get(f) + shift, step);
           return T(f, x).slice(dim, start ? c10::optional<int64_t>(start->get(f)) : c10::nullopt,
                                end ? c10::optional<int64_t>(end->get(f)) : c10::nullopt, step);
         };
       }},
      {"select", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0);
         const int64_t dim = a.integer(1).value;
         const IntArg index = a.integer(2);
         return [=](GraphFrame& f) -> c10::IValue { return T(f, x).select(dim, index.get(f)); };
       }},
      {"indexSelect", [](const NodeArgs& a) -> OpRun { a.expectCount(3); const int64_t x = a.tensor(0); const int64_t d = a.integer(1).value; const int64_t i = a.tensor(2); return [=](GraphFrame& f) -> c10::IValue { return T(f, x).index_select(d, T(f, i)); }; }},
      {"gather", [](const NodeArgs& a) -> OpRun { a.expectCount(3); const int64_t x = a.tensor(0); const int64_t d = a.integer(1).value; const int64_t i = a.tensor(2); return [=](GraphFrame& f) -> c10::IValue { return T(f, x).gather(d, T(f, i)); }; }},
      // Elementwise.
      UNARY("exp", x.exp()),
      UNARY("log", x.log()),
      UNARY("sqrt", x.sqrt()),
      UNARY("rsqrt", x.rsqrt()),
      UNARY("abs", x.abs()),
      UNARY("sin", x.sin()),
      UNARY("cos", x.cos()),
      UNARY("relu", at::relu(x)),
      UNARY("sigmoid", at::sigmoid(x)),
      UNARY("tanh", at::tanh(x)),
      UNARY("silu", at::silu(x)),
      UNARY("mish", at::mish(x)),
      UNARY("hardswish", at::hardswish(x)),
      UNARY("hardsigmoid", at::hardsigmoid(x)),
      UNARY("logicalNot", at::logical_not(x)),
      UNARY("detach", x.detach()),
      {"clamp", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0);
         const auto low = a.optionalNumber(1), high = a.optionalNumber(2);
         const c10::optional<at::Scalar> min = low ? c10::optional<at::Scalar>(*low) : c10::nullopt;
         const c10::optional<at::Scalar> max = high ? c10::optional<at::Scalar>(*high) : c10::nullopt;
         return [=](GraphFrame& f) -> c10::IValue { return at::clamp(T(f, x), min, max); };
       }},
      {"maskedFill", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0), mask = a.tensor(1);
         const at::Scalar value = scalarAt(a, 2);
         return [=](GraphFrame& f) -> c10::IValue { return T(f, x).masked_fill(T(f, mask), value); };
       }},
      {"tril", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const int64_t d = a.integer(1).value; return [=](GraphFrame& f) -> c10::IValue { return T(f, x).tril(d); }; }},
      {"triu", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const int64_t d = a.integer(1).value; return [=](GraphFrame& f) -> c10::IValue { return T(f, x).triu(d); }; }},
      {"softmax", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const int64_t d = a.integer(1).value; return [=](GraphFrame& f) -> c10::IValue { return at::softmax(T(f, x), d); }; }},
      {"logSoftmax", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const int64_t d = a.integer(1).value; return [=](GraphFrame& f) -> c10::IValue { return at::log_softmax(T(f, x), d); }; }},
      {"gelu", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const std::string how = a.text(1); return [=](GraphFrame& f) -> c10::IValue { return at::gelu(T(f, x), how); }; }},
      {"leakyRelu", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const double s = a.number(1); return [=](GraphFrame& f) -> c10::IValue { return at::leaky_relu(T(f, x), s); }; }},
      {"elu", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const double alpha = a.number(1); return [=](GraphFrame& f) -> c10::IValue { return at::elu(T(f, x), alpha); }; }},
      {"hardtanh", [](const NodeArgs& a) -> OpRun { a.expectCount(3); const int64_t x = a.tensor(0); const double low = a.number(1), high = a.number(2); return [=](GraphFrame& f) -> c10::IValue { return at::hardtanh(T(f, x), low, high); }; }},
      {"softplus", [](const NodeArgs& a) -> OpRun { a.expectCount(3); const int64_t x = a.tensor(0); const double beta = a.number(1), threshold = a.number(2); return [=](GraphFrame& f) -> c10::IValue { return at::softplus(T(f, x), beta, threshold); }; }},
      // Comparisons.
      {"eq", [](const NodeArgs& a) { return compare(a, [](const at::Tensor& x, const at::Tensor& y) { return at::eq(x, y); }, [](const at::Tensor& x, const at::Scalar& y) { return at::eq(x, y); }); }},
      {"ne", [](const NodeArgs& a) { return compare(a, [](const at::Tensor& x, const at::Tensor& y) { return at::ne(x, y); }, [](const at::Tensor& x, const at::Scalar& y) { return at::ne(x, y); }); }},
      {"lt", [](const NodeArgs& a) { return compare(a, [](const at::Tensor& x, const at::Tensor& y) { return at::lt(x, y); }, [](const at::Tensor& x, const at::Scalar& y) { return at::lt(x, y); }); }},
      {"le", [](const NodeArgs& a) { return compare(a, [](const at::Tensor& x, const at::Tensor& y) { return at::le(x, y); }, [](const at::Tensor& x, const at::Scalar& y) { return at::le(x, y); }); }},
      {"gt", [](const NodeArgs& a) { return compare(a, [](const at::Tensor& x, const at::Tensor& y) { return at::gt(x, y); }, [](const at::Tensor& x, const at::Scalar& y) { return at::gt(x, y); }); }},
      {"ge", [](const NodeArgs& a) { return compare(a, [](const at::Tensor& x, const at::Tensor& y) { return at::ge(x, y); }, [](const at::Tensor& x, const at::Scalar& y) { return at::ge(x, y); }); }},
      {"toDtype", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const auto dtype = dtypeNamed(a.text(1), a.node().op); return [=](GraphFrame& f) -> c10::IValue { return T(f, x).to(dtype); }; }},
      // Functional layers.
      {"scaledDotProductAttention", [](const NodeArgs& a) -> OpRun {
         a.expectCount(7);
         const int64_t q = a.tensor(0), k = a.tensor(1), v = a.tensor(2);
         const auto mask = a.optionalTensor(3);
         const double dropoutP = a.number(4);
         const bool causal = a.flag(5);
         const auto scale = a.optionalNumber(6);
         const size_t node = a.index();
         return [=](GraphFrame& f) -> c10::IValue {
           if (f.cache) {
             if (mask) throw NotIncremental("scaledDotProductAttention takes a mask written for the whole sequence");
             if (!causal) throw NotIncremental("scaledDotProductAttention is not causal: each position sees the later ones");
             return cachedCausalAttention(T(f, q), T(f, k), T(f, v), scale, f.cache->entries[node]);
           }
           return scaledDotProductAttention(T(f, q), T(f, k), T(f, v), optionalT(f, mask), dropoutP, causal, scale, f.training);
         };
       }},
      {"dropout", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const double p = a.number(1); return [=](GraphFrame& f) -> c10::IValue { return at::dropout(T(f, x), p, f.training); }; }},
      {"linear", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0), w = a.tensor(1);
         const auto b = a.optionalTensor(2);
         return [=](GraphFrame& f) -> c10::IValue { return at::linear(T(f, x), T(f, w), optionalT(f, b)); };
       }},
      {"layerNorm", [](const NodeArgs& a) -> OpRun {
         a.expectCount(5);
         const int64_t x = a.tensor(0);
         const auto shape = a.integers(1);
         const auto w = a.optionalTensor(2), b = a.optionalTensor(3);
         const double eps = a.number(4);
         return [=](GraphFrame& f) -> c10::IValue { return at::layer_norm(T(f, x), intValues(shape, f), optionalT(f, w), optionalT(f, b), eps); };
       }},
      {"groupNorm", [](const NodeArgs& a) -> OpRun {
         a.expectCount(5);
         const int64_t x = a.tensor(0);
         const int64_t groups = a.integer(1).value;
         const auto w = a.optionalTensor(2), b = a.optionalTensor(3);
         const double eps = a.number(4);
         return [=](GraphFrame& f) -> c10::IValue { return at::group_norm(T(f, x), groups, optionalT(f, w), optionalT(f, b), eps); };
       }},
      {"conv1d", convolution<1>},
      {"conv2d", convolution<2>},
      {"conv3d", convolution<3>},
      {"maxPool1d", maxPool<1>},
      {"maxPool2d", maxPool<2>},
      {"maxPool3d", maxPool<3>},
      {"avgPool1d", avgPool<1>},
      {"avgPool2d", avgPool<2>},
      {"avgPool3d", avgPool<3>},
      {"adaptiveAvgPool1d", adaptiveAvgPool<1>},
      {"adaptiveAvgPool2d", adaptiveAvgPool<2>},
      {"adaptiveAvgPool3d", adaptiveAvgPool<3>},
      {"interpolate2d", [](const NodeArgs& a) -> OpRun {
         a.expectCount(5);
         const int64_t x = a.tensor(0);
         const auto size = a.optionalIntegers(1);
         const auto scale = a.optionalNumber(2);
         const std::string mode = a.text(3);
         const bool alignCorners = a.flag(4);
         if (mode != "nearest" && mode != "bilinear") throw InvalidArgument("F.interpolate: mode must be 'nearest' or 'bilinear', got '" + mode + "'");
         if (size.has_value() == scale.has_value()) throw InvalidArgument("F.interpolate: give exactly one of size and scaleFactor");
         return [=](GraphFrame& f) -> c10::IValue {
           const auto& input = T(f, x);
           std::vector<int64_t> out;
           if (size) {
             out = intValues(*size, f);
           } else {
             out = {static_cast<int64_t>(std::floor(input.size(-2) * *scale)), static_cast<int64_t>(std::floor(input.size(-1) * *scale))};
           }
           const c10::optional<double> factor = scale ? c10::optional<double>(*scale) : c10::nullopt;
           return mode == "nearest" ? at::upsample_nearest2d(input, out, factor, factor)
                                    : at::upsample_bilinear2d(input, out, alignCorners, factor, factor);
         };
       }},
      {"constantPad", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t x = a.tensor(0);
         const auto pad = intValues(a.integers(1), GraphFrame{});
         const at::Scalar value = scalarAt(a, 2);
         return [=](GraphFrame& f) -> c10::IValue { return at::constant_pad_nd(T(f, x), pad, value); };
       }},
      {"embedding", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t w = a.tensor(0), ids = a.tensor(1); return [=](GraphFrame& f) -> c10::IValue { return at::embedding(T(f, w), T(f, ids)); }; }},
      // Building tensors.
      {"cat", [](const NodeArgs& a) { return joined(a, false); }},
      {"stack", [](const NodeArgs& a) { return joined(a, true); }},
      {"where", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const int64_t condition = a.tensor(0);
         const Operand x = operand(a, 1), y = operand(a, 2);
         return [=](GraphFrame& f) -> c10::IValue { return whereOf(T(f, condition), operandValue(f, x), operandValue(f, y)); };
       }},
      {"arange", [](const NodeArgs& a) -> OpRun {
         a.expectCount(4);
         const IntArg start = a.integer(0), end = a.integer(1);
         const at::Scalar step = scalarAt(a, 2);
         const auto dtype = dtypeNamed(a.text(3), "arange");
         return [=](GraphFrame& f) -> c10::IValue {
           // Positions up to the sequence's length continue after the cached ones.
           const int64_t shift = f.cache ? f.cache->positionShift(end.slot) : 0;
           return at::arange(at::Scalar(start.get(f) + shift), at::Scalar(end.get(f) + shift), step,
                             at::TensorOptions().dtype(dtype).device(f.device));
         };
       }},
      {"fullLike", [](const NodeArgs& a) -> OpRun { a.expectCount(2); const int64_t x = a.tensor(0); const at::Scalar value = scalarAt(a, 1); return [=](GraphFrame& f) -> c10::IValue { return at::full_like(T(f, x), value); }; }},
      {"full", [](const NodeArgs& a) -> OpRun {
         a.expectCount(3);
         const auto size = a.integers(0);
         const at::Scalar value = scalarAt(a, 1);
         const auto dtype = dtypeNamed(a.text(2), "full");
         return [=](GraphFrame& f) -> c10::IValue { return at::full(intValues(size, f), value, at::TensorOptions().dtype(dtype).device(f.device)); };
       }},
  };
  return ops;
}

}  // namespace

OpRun compileOp(const NodeArgs& args) {
  const auto& ops = table();
  const auto it = ops.find(args.node().op);
  return it == ops.end() ? OpRun() : it->second(args);
}

}  // namespace firebrand
