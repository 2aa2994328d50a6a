// Reductions over some dimensions (dims null: every one) or one dimension, and scans along one.
#include <ATen/Functions.h>

#include "core/errors.h"
#include "core/graph/op_support.h"

namespace firebrand {
namespace {

OpCompile sumOrMean(bool mean) {
  return [mean](const NodeArgs& a) -> OpRun {
    a.expectCount(3);
    const int64_t x = a.tensor(0);
    const auto dims = a.optionalIntegers(1);
    const bool keepdim = a.flag(2);
    return [=](GraphFrame& f) -> c10::IValue {
      if (!dims) return mean ? T(f, x).mean() : T(f, x).sum();
      const auto values = intValues(*dims, f);
      return mean ? T(f, x).mean(values, keepdim) : T(f, x).sum(values, keepdim);
    };
  };
}

// amax, amin, logsumexp: (x, dims, keepdim).
template <typename Fn>
OpCompile overDims(Fn fn) {
  return [fn](const NodeArgs& a) -> OpRun {
    a.expectCount(3);
    const int64_t x = a.tensor(0);
    const auto dims = a.integers(1);
    const bool keepdim = a.flag(2);
    return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x), intValues(dims, f), keepdim); };
  };
}

// max(dim) / min(dim): [values, indices].
OpCompile extremumWithIndex(bool maximum) {
  return [maximum](const NodeArgs& a) -> OpRun {
    a.expectCount(3);
    const int64_t x = a.tensor(0);
    const IntArg dim = a.integer(1);
    const bool keepdim = a.flag(2);
    return [=](GraphFrame& f) -> c10::IValue {
      auto [values, indices] = maximum ? T(f, x).max(dim.get(f), keepdim) : T(f, x).min(dim.get(f), keepdim);
      return c10::List<at::Tensor>({values, indices});
    };
  };
}

OpCompile argExtremum(bool maximum) {
  return [maximum](const NodeArgs& a) -> OpRun {
    a.expectCount(3);
    const int64_t x = a.tensor(0);
    const auto dim = a.optionalInteger(1);
    const bool keepdim = a.flag(2);
    return [=](GraphFrame& f) -> c10::IValue {
      const auto d = dim ? c10::optional<int64_t>(dim->get(f)) : c10::nullopt;
      return maximum ? T(f, x).argmax(d, keepdim) : T(f, x).argmin(d, keepdim);
    };
  };
}

// var / std with a correction (Bessel's by default, in TypeScript).
OpCompile spread(bool standardDeviation) {
  return [standardDeviation](const NodeArgs& a) -> OpRun {
    a.expectCount(4);
    const int64_t x = a.tensor(0);
    const auto dims = a.optionalIntegers(1);
    const int64_t correction = a.integer(2).value;
    const bool keepdim = a.flag(3);
    return [=](GraphFrame& f) -> c10::IValue {
      const auto list = dims ? intValues(*dims, f) : std::vector<int64_t>{};
      const at::OptionalIntArrayRef dimRef = dims ? at::OptionalIntArrayRef(list) : at::OptionalIntArrayRef();
      return standardDeviation ? at::std(T(f, x), dimRef, correction, keepdim)
                               : at::var(T(f, x), dimRef, correction, keepdim);
    };
  };
}

// torch.sum(x) or torch.sum(x, dims, keepdim).
OpScript allOrDims(const std::string& function) {
  return [function](const GraphNode& n, const ScriptArgs& a) {
    return isNullArg(n, 1) ? function + "(" + a[0] + ")"
                           : function + "(" + a[0] + ", " + scriptDims(n.args[1]) + ", " + a[2] + ")";
  };
}

OpScript dimsAlways(const std::string& function) {
  return [function](const GraphNode& n, const ScriptArgs& a) {
    return function + "(" + a[0] + ", " + scriptDims(n.args[1]) + ", " + a[2] + ")";
  };
}

OpScript spreadScript(const std::string& function) {
  return [function](const GraphNode& n, const ScriptArgs& a) {
    return function + "(" + a[0] + ", " + (isNullArg(n, 1) ? "None" : scriptDims(n.args[1])) + ", correction=" + a[2] +
           ", keepdim=" + a[3] + ")";
  };
}

OnnxForm reductionOnnx(const char* opType) {
  return [opType](const OnnxOp& o) -> OnnxValue { return {onnxReduction(o, opType, o.tensor(0), 1, 2)}; };
}

// x.max() / x.min(): over every dim, to a 0-d tensor.
OnnxForm allDimsOnnx(const char* opType) {
  return [opType](const OnnxOp& o) -> OnnxValue {
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < o.rank(0); ++d) axes.push_back(d);
    return {o.b.reduce(opType, o.tensor(0), axes, false)};
  };
}

// max(dim) / min(dim): the values and their indices.
OnnxForm extremumWithIndexOnnx(bool maximum) {
  return [maximum](const OnnxOp& o) -> OnnxValue {
    const int64_t axis = normalizedDim(o.constant(1), o.rank(0));
    const int64_t keep = o.args.flag(2) ? 1 : 0;
    const std::string x = o.tensor(0);
    return {o.b.reduce(maximum ? "ReduceMax" : "ReduceMin", x, {axis}, keep != 0),
            o.b.op(maximum ? "ArgMax" : "ArgMin", {x}, {{"axis", axis}, {"keepdims", keep}})};
  };
}

OnnxForm argExtremumOnnx(bool maximum) {
  return [maximum](const OnnxOp& o) -> OnnxValue {
    const char* opType = maximum ? "ArgMax" : "ArgMin";
    const int64_t keep = o.args.flag(2) ? 1 : 0;
    if (!isNullArg(o.args.node(), 1)) {
      const int64_t axis = normalizedDim(o.constant(1), o.rank(0));
      return {o.b.op(opType, {o.tensor(0)}, {{"axis", axis}, {"keepdims", keep}})};
    }
    if (keep) throw NotExportable("argmax/argmin over every dim with keepdim has no ONNX form yet");
    const std::string flat = o.b.op("Reshape", {o.tensor(0), o.b.ints({-1})});
    return {o.b.op(opType, {flat}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}})};
  };
}

// var / std: the squared deviations' sum over (count - correction), count read from x's shape.
OnnxForm spreadOnnx(bool standardDeviation) {
  return [standardDeviation](const OnnxOp& o) -> OnnxValue {
    OnnxBuilder& b = o.b;
    const std::string x = o.tensor(0);
    const int64_t rank = o.rank(0);
    std::vector<int64_t> axes;
    if (isNullArg(o.args.node(), 1)) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    } else {
      axes = onnxAxes(o.constants(1), rank);
    }
    const bool keep = o.args.flag(3);
    const std::string deviation = b.op("Sub", {x, b.reduce("ReduceMean", x, axes, true)});
    const std::string squares = b.reduce("ReduceSum", b.op("Mul", {deviation, deviation}), axes, keep);
    const std::string count = b.reduce("ReduceProd", b.op("Gather", {b.shape(x), b.ints(axes)}), {0}, false);
    const at::ScalarType type = o.resultType();
    const std::string divisor = b.op("Sub", {b.cast(count, type), b.scalar(static_cast<double>(o.constant(2)), type)});
    const std::string variance = b.op("Div", {squares, divisor});
    return {standardDeviation ? b.op("Sqrt", {variance}) : variance};
  };
}

OnnxValue cumsumOnnx(const OnnxOp& o) {
  return {o.b.op("CumSum", {o.tensor(0), o.b.scalar(static_cast<double>(o.constant(1)), at::kLong)})};
}

}  // namespace

OpRows reductionOps() {
  return {
      {"sum", sumOrMean(false), allOrDims("torch.sum"), reductionOnnx("ReduceSum")},
      {"mean", sumOrMean(true), allOrDims("torch.mean"), reductionOnnx("ReduceMean")},
      {"amax", overDims([](const at::Tensor& x, at::IntArrayRef d, bool k) { return x.amax(d, k); }),
       dimsAlways("torch.amax"), reductionOnnx("ReduceMax")},
      {"amin", overDims([](const at::Tensor& x, at::IntArrayRef d, bool k) { return x.amin(d, k); }),
       dimsAlways("torch.amin"), reductionOnnx("ReduceMin")},
      {"logsumexp", overDims([](const at::Tensor& x, at::IntArrayRef d, bool k) { return at::logsumexp(x, d, k); }),
       dimsAlways("torch.logsumexp"), reductionOnnx("ReduceLogSumExp")},
      {"maxAll", unaryOp([](const at::Tensor& x) { return x.max(); }), scriptCall("torch.max"),
       allDimsOnnx("ReduceMax")},
      {"minAll", unaryOp([](const at::Tensor& x) { return x.min(); }), scriptCall("torch.min"),
       allDimsOnnx("ReduceMin")},
      {"maxDim", extremumWithIndex(true), scriptCall("torch.max"), extremumWithIndexOnnx(true)},
      {"minDim", extremumWithIndex(false), scriptCall("torch.min"), extremumWithIndexOnnx(false)},
      {"argmax", argExtremum(true), scriptCall("torch.argmax"), argExtremumOnnx(true)},
      {"argmin", argExtremum(false), scriptCall("torch.argmin"), argExtremumOnnx(false)},
      {"var", spread(false), spreadScript("torch.var"), spreadOnnx(false)},
      {"std", spread(true), spreadScript("torch.std"), spreadOnnx(true)},
      {"cumsum", alongDim([](const at::Tensor& x, int64_t d) { return x.cumsum(d); }), scriptCall("torch.cumsum"),
       cumsumOnnx},
  };
}

}  // namespace firebrand
