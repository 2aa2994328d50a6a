// torch.nn.functional's layers as ops over tensors forward passes in: linear,
// dropout, attention, embedding, padding and resizing (the norms: ops_norms.cpp).
#include <ATen/Functions.h>

#include <cmath>

#include "core/errors.h"
#include "core/graph/op_support.h"
#include "core/nn/attention.h"
#include "core/nn/linear_layer.h"
#include "core/nn/script_text.h"

namespace firebrand {
namespace {

OpRun attention(const NodeArgs& a) {
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
    return scaledDotProductAttention(T(f, q), T(f, k), T(f, v), optionalT(f, mask), dropoutP, causal, scale,
                                     f.training);
  };
}

// F.scaledDotProductAttention as its reference formula (nn/attention.cpp), in ops every PyTorch has.
std::string attentionScript(const GraphNode& n, const ScriptArgs& a) {
  const std::string& q = a[0];
  const std::string& k = a[1];
  const std::string boolType = std::to_string(static_cast<int>(at::kBool));  // no torch.bool without Python
  const std::string scale = isNullArg(n, 6) ? "(1.0 / float(" + q + ".size(-1)) ** 0.5)" : scriptReal(n.args[6]);
  std::string weights = "torch.matmul(" + q + ", " + k + ".transpose(-2, -1)) * " + scale;
  if (const auto* causal = std::get_if<bool>(&n.args[5].value); causal && *causal) {
    weights = "(" + weights + ").masked_fill(torch.ones([" + q + ".size(-2), " + k + ".size(-2)], dtype=" + boolType +
              ", device=" + q + ".device).tril().logical_not(), float('-inf'))";
  }
  if (!isNullArg(n, 3)) {
    const std::string& mask = a[3];
    weights = "((" + weights + ").masked_fill(" + mask + ".logical_not(), float('-inf')) if " + mask +
              ".dtype == " + boolType + " else (" + weights + ") + " + mask + ")";
  }
  weights = "torch.softmax(" + weights + ", -1)";
  if (scriptReal(n.args[4]) != "0.0")
    weights = "torch.dropout(" + weights + ", " + scriptReal(n.args[4]) + ", self.training)";
  return "torch.matmul(" + weights + ", " + a[2] + ")";
}

OpRun dropout(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const double p = a.number(1);
  return [=](GraphFrame& f) -> c10::IValue { return at::dropout(T(f, x), p, f.training); };
}

// F.dropout2d: whole channels.
OpRun featureDropout(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const double p = a.number(1);
  return [=](GraphFrame& f) -> c10::IValue { return at::feature_dropout(T(f, x), p, f.training); };
}

OpRun linear(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t x = a.tensor(0), w = a.tensor(1);
  const auto b = a.optionalTensor(2);
  return [=](GraphFrame& f) -> c10::IValue {
    return linearForward(T(f, x), T(f, w), optionalT(f, b).value_or(at::Tensor()));
  };
}

OpRun interpolate(const NodeArgs& a) {
  a.expectCount(5);
  const int64_t x = a.tensor(0);
  const auto size = a.optionalIntegers(1);
  const auto scale = a.optionalNumber(2);
  const std::string mode = a.text(3);
  const bool alignCorners = a.flag(4);
  if (mode != "nearest" && mode != "bilinear")
    throw InvalidArgument("F.interpolate: mode must be 'nearest' or 'bilinear', got '" + mode + "'");
  if (size.has_value() == scale.has_value())
    throw InvalidArgument("F.interpolate: give exactly one of size and scaleFactor");
  return [=](GraphFrame& f) -> c10::IValue {
    const auto& input = T(f, x);
    const std::vector<int64_t> out =
        size ? intValues(*size, f)
             : std::vector<int64_t>{static_cast<int64_t>(std::floor(input.size(-2) * *scale)),
                                    static_cast<int64_t>(std::floor(input.size(-1) * *scale))};
    const c10::optional<double> factor = scale ? c10::optional<double>(*scale) : c10::nullopt;
    return mode == "nearest" ? at::upsample_nearest2d(input, out, factor, factor)
                             : at::upsample_bilinear2d(input, out, alignCorners, factor, factor);
  };
}

OpRun constantPad(const NodeArgs& a) {
  a.expectCount(3);
  const int64_t x = a.tensor(0);
  const auto pad = constants(a.integers(1));
  const at::Scalar value = scalarAt(a, 2);
  return [=](GraphFrame& f) -> c10::IValue { return at::constant_pad_nd(T(f, x), pad, value); };
}

OpRun embedding(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t w = a.tensor(0), ids = a.tensor(1);
  return [=](GraphFrame& f) -> c10::IValue { return at::embedding(T(f, w), T(f, ids)); };
}

}  // namespace

OpRows functionalOps() {
  return {
      {"scaledDotProductAttention", attention, attentionScript},
      {"dropout", dropout,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.dropout(" + a[0] + ", " + scriptReal(n.args[1]) + ", self.training)";
       }},
      {"featureDropout", featureDropout,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.feature_dropout(" + a[0] + ", " + scriptReal(n.args[1]) + ", self.training)";
       }},
      {"linear", linear, scriptCall("torch.linear")},
      {"interpolate2d", interpolate,
       [](const GraphNode& n, const ScriptArgs& a) {
         return scriptInterpolate(a[0], a[1], isNullArg(n, 2) ? a[2] : scriptReal(n.args[2]),
                                  *n.args[3].string() == "nearest", a[4]);
       }},
      {"constantPad", constantPad, scriptCall("torch.constant_pad_nd")},
      {"embedding", embedding, scriptCall("torch.embedding")},
  };
}

}  // namespace firebrand
