// Reductions over some dimensions (dims null: every one) or one dimension, and scans along one.
#include <ATen/Functions.h>

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

}  // namespace

OpRows reductionOps() {
  return {
      {"sum", sumOrMean(false), allOrDims("torch.sum")},
      {"mean", sumOrMean(true), allOrDims("torch.mean")},
      {"amax", overDims([](const at::Tensor& x, at::IntArrayRef d, bool k) { return x.amax(d, k); }),
       dimsAlways("torch.amax")},
      {"amin", overDims([](const at::Tensor& x, at::IntArrayRef d, bool k) { return x.amin(d, k); }),
       dimsAlways("torch.amin")},
      {"logsumexp", overDims([](const at::Tensor& x, at::IntArrayRef d, bool k) { return at::logsumexp(x, d, k); }),
       dimsAlways("torch.logsumexp")},
      {"maxAll", unaryOp([](const at::Tensor& x) { return x.max(); }), scriptCall("torch.max")},
      {"minAll", unaryOp([](const at::Tensor& x) { return x.min(); }), scriptCall("torch.min")},
      {"maxDim", extremumWithIndex(true), scriptCall("torch.max")},
      {"minDim", extremumWithIndex(false), scriptCall("torch.min")},
      {"argmax", argExtremum(true), scriptCall("torch.argmax")},
      {"argmin", argExtremum(false), scriptCall("torch.argmin")},
      {"var", spread(false), spreadScript("torch.var")},
      {"std", spread(true), spreadScript("torch.std")},
      {"cumsum", alongDim([](const at::Tensor& x, int64_t d) { return x.cumsum(d); }), scriptCall("torch.cumsum")},
  };
}

}  // namespace firebrand
