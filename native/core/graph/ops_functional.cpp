// torch.nn.functional's layers as ops over tensors forward passes in: linear,
// dropout, attention, embedding, padding and resizing (the norms: ops_norms.cpp).
#include <ATen/Functions.h>

#include <cmath>

#include "core/errors.h"
#include "core/graph/op_support.h"
#include "core/nn/attention.h"
#include "core/nn/linear_layer.h"
#include "core/nn/script_text.h"
#include "core/onnx/onnx_layers.h"

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
      std::vector<at::Tensor>& entry = f.cache->entries[node];
      const c10::optional<at::Tensor> keep = optionalT(f, mask);
      if (keep) {
        // A mask over every key, the cached ones too (a padded batch's), applies as it is.
        const int64_t keys = (entry.empty() ? 0 : entry[0].size(-2)) + T(f, k).size(-2);
        if (causal || keep->size(-1) != keys) {
          throw NotIncremental("scaledDotProductAttention takes a mask of " + std::to_string(keep->size(-1)) + " keys" +
                               (causal ? " and isCausal" : "") + ", not one over the " + std::to_string(keys) +
                               " cached and new positions alone");
        }
      } else if (!causal) {
        throw NotIncremental("scaledDotProductAttention is not causal: each position sees the later ones");
      }
      return cachedCausalAttention(T(f, q), T(f, k), T(f, v), keep, scale, entry);
    }
    return scaledDotProductAttention(T(f, q), T(f, k), T(f, v), optionalT(f, mask), dropoutP, causal, scale,
                                     f.training);
  };
}

// F.slidingWindowAttention: causal attention in which each query sees its last `window` positions.
OpRun windowAttention(const NodeArgs& a) {
  a.expectCount(6);
  const int64_t q = a.tensor(0), k = a.tensor(1), v = a.tensor(2);
  const IntArg window = a.integer(3);
  const double dropoutP = a.number(4);
  const auto scale = a.optionalNumber(5);
  const size_t node = a.index();
  return [=](GraphFrame& f) -> c10::IValue {
    const int64_t positions = window.get(f);
    if (positions < 1)
      throw InvalidArgument("slidingWindowAttention: window must be >= 1, got " + std::to_string(positions));
    const at::Tensor& query = T(f, q);
    const at::Tensor& key = T(f, k);
    if (f.cache) return cachedWindowAttention(query, key, T(f, v), positions, scale, f.cache->entries[node]);
    return scaledDotProductAttention(query, key, T(f, v),
                                     windowKeep(query.size(-2), key.size(-2), positions, query.options()), dropoutP,
                                     false, scale, f.training);
  };
}

// Attention's reference formula in ops every PyTorch has: weights (q kᵀ · scale, masked) through
// softmax and dropout, times v.
std::string attentionFormula(const std::string& weights, const std::string& value, const GraphNode& n,
                             size_t dropoutArg) {
  std::string softmax = "torch.softmax(" + weights + ", -1)";
  if (scriptReal(n.args[dropoutArg]) != "0.0")
    softmax = "torch.dropout(" + softmax + ", " + scriptReal(n.args[dropoutArg]) + ", self.training)";
  return "torch.matmul(" + softmax + ", " + value + ")";
}

std::string scaledScores(const GraphNode& n, const ScriptArgs& a, size_t scaleArg) {
  const std::string scale =
      isNullArg(n, scaleArg) ? "(1.0 / float(" + a[0] + ".size(-1)) ** 0.5)" : scriptReal(n.args[scaleArg]);
  return "torch.matmul(" + a[0] + ", " + a[1] + ".transpose(-2, -1)) * " + scale;
}

// [queries, keys] of booleans in TorchScript (no torch.bool without Python).
std::string scriptOnes(const ScriptArgs& a) {
  const std::string boolType = std::to_string(static_cast<int>(at::kBool));
  return "torch.ones([" + a[0] + ".size(-2), " + a[1] + ".size(-2)], dtype=" + boolType + ", device=" + a[0] +
         ".device)";
}

std::string attentionScript(const GraphNode& n, const ScriptArgs& a) {
  const std::string boolType = std::to_string(static_cast<int>(at::kBool));
  std::string weights = scaledScores(n, a, 6);
  if (const auto* causal = std::get_if<bool>(&n.args[5].value); causal && *causal)
    weights = "(" + weights + ").masked_fill(" + scriptOnes(a) + ".tril().logical_not(), float('-inf'))";
  if (!isNullArg(n, 3)) {
    const std::string& mask = a[3];
    weights = "((" + weights + ").masked_fill(" + mask + ".logical_not(), float('-inf')) if " + mask +
              ".dtype == " + boolType + " else (" + weights + ") + " + mask + ")";
  }
  return attentionFormula(weights, a[2], n, 4);
}

// windowKeep's mask: key j seen by query i when keys - queries + i - window < j <= keys - queries + i.
std::string windowAttentionScript(const GraphNode& n, const ScriptArgs& a) {
  const std::string offset = "(" + a[1] + ".size(-2) - " + a[0] + ".size(-2))";
  const std::string keep = scriptOnes(a) + ".tril(" + offset + ").logical_and(" + scriptOnes(a) + ".triu(" + offset +
                           " - " + a[3] + " + 1))";
  return attentionFormula("(" + scaledScores(n, a, 5) + ").masked_fill(" + keep + ".logical_not(), float('-inf'))",
                          a[2], n, 4);
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

// The scores' scale: given, or 1/sqrt of the queries' last (static) size.
double attentionScale(const OnnxOp& o, size_t scaleArg) {
  if (const auto scale = o.args.optionalNumber(scaleArg)) return *scale;
  return 1.0 / std::sqrt(static_cast<double>(o.example(0).size(-1)));
}

OnnxValue attentionOnnx(const OnnxOp& o) {
  const at::ScalarType type = o.resultType();
  const std::string q = o.tensor(0), k = o.tensor(1);
  std::string keep = o.args.flag(5) ? onnxCausalKeep(o.b, q, k, /*alignEnd=*/false, std::nullopt) : "";
  std::string additive;
  if (const auto mask = o.optionalTensor(3)) {
    if (o.dtype(3) == at::kBool) {
      keep = keep.empty() ? *mask : o.b.op("And", {keep, *mask});
    } else {
      additive = o.dtype(3) == type ? *mask : o.b.cast(*mask, type);
    }
  }
  return {onnxAttention(o.b, q, k, o.tensor(2), o.rank(0), attentionScale(o, 6), keep, additive, type)};
}

OnnxValue windowAttentionOnnx(const OnnxOp& o) {
  const std::string q = o.tensor(0), k = o.tensor(1);
  const std::string keep = onnxCausalKeep(o.b, q, k, /*alignEnd=*/true, o.integer(3));
  return {onnxAttention(o.b, q, k, o.tensor(2), o.rank(0), attentionScale(o, 5), keep, "", o.resultType())};
}

OnnxValue linearOnnx(const OnnxOp& o) {
  return {onnxLinear(o.b, o.tensor(0), o.rank(0), o.tensor(1), o.optionalTensor(2).value_or(""))};
}

// F.interpolate as Resize, with torch.onnx's coordinate modes for PyTorch's nearest and bilinear.
OnnxValue interpolateOnnx(const OnnxOp& o) {
  OnnxBuilder& b = o.b;
  const std::string x = o.tensor(0);
  const bool nearest = o.args.text(3) == "nearest";
  std::vector<OnnxAttribute> attributes;
  if (nearest) {
    attributes = {{"mode", std::string("nearest")},
                  {"coordinate_transformation_mode", std::string("asymmetric")},
                  {"nearest_mode", std::string("floor")}};
  } else {
    attributes = {
        {"mode", std::string("linear")},
        {"coordinate_transformation_mode", std::string(o.args.flag(4) ? "align_corners" : "pytorch_half_pixel")}};
  }
  if (isNullArg(o.args.node(), 1)) {
    const float scale = static_cast<float>(o.args.number(2));
    const std::string scales = b.constant(at::tensor(std::vector<float>{1, 1, scale, scale}));
    return {b.op("Resize", {x, "", scales}, std::move(attributes))};
  }
  const std::string sizes = b.op("Concat", {b.shape(x, 0, 2), o.integers(1)}, {{"axis", int64_t{0}}});
  return {b.op("Resize", {x, "", "", sizes}, std::move(attributes))};
}

// F.pad's pairs run from the last dim backwards; ONNX's pads are every dim's begins, then its ends.
OnnxValue constantPadOnnx(const OnnxOp& o) {
  const int64_t rank = o.rank(0);
  const auto pad = o.constants(1);
  std::vector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; 2 * i + 1 < pad.size(); ++i) {
    const int64_t dim = rank - 1 - static_cast<int64_t>(i);
    pads[dim] = pad[2 * i];
    pads[rank + dim] = pad[2 * i + 1];
  }
  return {
      o.b.op("Pad", {o.tensor(0), o.b.ints(pads), o.operand(2, o.resultType())}, {{"mode", std::string("constant")}})};
}

OnnxValue embeddingOnnx(const OnnxOp& o) {
  return {o.b.op("Gather", {o.tensor(0), o.tensor(1)}, {{"axis", int64_t{0}}})};
}

// Dropout is the identity in the exported (eval) model.
OnnxValue identityOnnx(const OnnxOp& o) { return {o.tensor(0)}; }

}  // namespace

OpRows functionalOps() {
  return {
      {"scaledDotProductAttention", attention, attentionScript, attentionOnnx},
      {"slidingWindowAttention", windowAttention, windowAttentionScript, windowAttentionOnnx},
      {"dropout", dropout,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.dropout(" + a[0] + ", " + scriptReal(n.args[1]) + ", self.training)";
       },
       identityOnnx},
      {"featureDropout", featureDropout,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.feature_dropout(" + a[0] + ", " + scriptReal(n.args[1]) + ", self.training)";
       },
       identityOnnx},
      {"linear", linear, scriptCall("torch.linear"), linearOnnx},
      {"interpolate2d", interpolate,
       [](const GraphNode& n, const ScriptArgs& a) {
         return scriptInterpolate(a[0], a[1], isNullArg(n, 2) ? a[2] : scriptReal(n.args[2]),
                                  *n.args[3].string() == "nearest", a[4]);
       },
       interpolateOnnx},
      {"constantPad", constantPad, scriptCall("torch.constant_pad_nd"), constantPadOnnx},
      {"embedding", embedding, scriptCall("torch.embedding"), embeddingOnnx},
  };
}

}  // namespace firebrand
