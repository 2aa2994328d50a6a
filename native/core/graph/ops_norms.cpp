// torch.nn.functional's normalisations as ops: layer, group and RMS norms.
#include <ATen/Functions.h>

#include "core/graph/op_support.h"
#include "core/nn/rms_norm.h"
#include "core/onnx/onnx_layers.h"

namespace firebrand {
namespace {

OpRun layerNorm(const NodeArgs& a) {
  a.expectCount(5);
  const int64_t x = a.tensor(0);
  const auto shape = a.integers(1);
  const auto w = a.optionalTensor(2), b = a.optionalTensor(3);
  const double eps = a.number(4);
  return [=](GraphFrame& f) -> c10::IValue {
    return at::layer_norm(T(f, x), intValues(shape, f), optionalT(f, w), optionalT(f, b), eps);
  };
}

OpRun rmsNormOp(const NodeArgs& a) {
  a.expectCount(4);
  const int64_t x = a.tensor(0);
  const auto shape = constants(a.integers(1));
  const auto w = a.optionalTensor(2);
  const auto eps = a.optionalNumber(3);
  return [=](GraphFrame& f) -> c10::IValue { return rmsNorm(T(f, x), shape, optionalT(f, w), eps, "F.rmsNorm"); };
}

std::string rmsNormOpScript(const GraphNode& n, const ScriptArgs& a) {
  const auto* dims = n.args[1].array();
  std::optional<double> eps;
  if (const auto* integer = n.args[3].integer()) eps = static_cast<double>(*integer);
  if (const auto* real = std::get_if<double>(&n.args[3].value)) eps = *real;
  return rmsNormScript(a[0], dims ? dims->size() : 1, a[2], eps);
}

OpRun groupNorm(const NodeArgs& a) {
  a.expectCount(5);
  const int64_t x = a.tensor(0);
  const int64_t groups = a.integer(1).value;
  const auto w = a.optionalTensor(2), b = a.optionalTensor(3);
  const double eps = a.number(4);
  return [=](GraphFrame& f) -> c10::IValue {
    return at::group_norm(T(f, x), groups, optionalT(f, w), optionalT(f, b), eps);
  };
}

std::string optionalName(const OnnxOp& o, size_t i) { return o.optionalTensor(i).value_or(""); }

OnnxValue layerNormOnnx(const OnnxOp& o) {
  return {onnxLayerNorm(o.b, o.tensor(0), o.constants(1), optionalName(o, 2), optionalName(o, 3), o.args.number(4),
                        o.resultType())};
}

OnnxValue rmsNormOnnx(const OnnxOp& o) {
  return {onnxRmsNorm(o.b, o.tensor(0), o.constants(1).size(), optionalName(o, 2), o.args.optionalNumber(3),
                      o.resultType())};
}

OnnxValue groupNormOnnx(const OnnxOp& o) {
  return {onnxGroupNorm(o.b, o.tensor(0), o.rank(0), o.constant(1), optionalName(o, 2), optionalName(o, 3),
                        o.args.number(4), o.resultType())};
}

}  // namespace

OpRows normOps() {
  return {
      {"layerNorm", layerNorm,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.layer_norm(" + a[0] + ", " + scriptDims(n.args[1]) + ", " + a[2] + ", " + a[3] + ", " +
                scriptReal(n.args[4]) + ")";
       },
       layerNormOnnx},
      {"rmsNorm", rmsNormOp, rmsNormOpScript, rmsNormOnnx},
      {"groupNorm", groupNorm,
       [](const GraphNode& n, const ScriptArgs& a) {
         return "torch.group_norm(" + a[0] + ", " + a[1] + ", " + a[2] + ", " + a[3] + ", " + scriptReal(n.args[4]) +
                ")";
       },
       groupNormOnnx},
  };
}

}  // namespace firebrand
