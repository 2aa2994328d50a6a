// Activations: torch.nn.functional's nonlinearities and softmax.
#include <ATen/Functions.h>

#include <cmath>

#include "core/graph/op_support.h"

namespace firebrand {
namespace {

// An activation with constant options (x, a1, ...): fn(x, options...).
template <typename Fn>
OpCompile withNumbers(Fn fn) {
  return [fn](const NodeArgs& a) -> OpRun {
    const int64_t x = a.tensor(0);
    if constexpr (std::is_invocable_v<Fn, const at::Tensor&, double>) {
      a.expectCount(2);
      const double first = a.number(1);
      return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x), first); };
    } else {
      a.expectCount(3);
      const double first = a.number(1), second = a.number(2);
      return [=](GraphFrame& f) -> c10::IValue { return fn(T(f, x), first, second); };
    }
  };
}

// torch.<function>(x, a1, ...) with every number written as a float.
OpScript realsScript(const std::string& function) {
  return [function](const GraphNode& n, const ScriptArgs& a) {
    std::string out = function + "(" + a[0];
    for (size_t i = 1; i < n.args.size(); ++i) out += ", " + scriptReal(n.args[i]);
    return out + ")";
  };
}

OpRun gelu(const NodeArgs& a) {
  a.expectCount(2);
  const int64_t x = a.tensor(0);
  const std::string approximate = a.text(1);
  return [=](GraphFrame& f) -> c10::IValue { return at::gelu(T(f, x), approximate); };
}

std::string number(const OnnxOp& o, double value) { return o.b.scalar(value, o.resultType()); }

// F.gelu: x·Φ(x) with erf, or the tanh approximation (ONNX's Gelu arrives only in opset 20).
OnnxValue geluOnnx(const OnnxOp& o) {
  OnnxBuilder& b = o.b;
  const std::string x = o.tensor(0);
  std::string inner;
  if (o.args.text(1) == "tanh") {
    const std::string cubic = b.op("Mul", {number(o, 0.044715), b.op("Pow", {x, number(o, 3)})});
    inner = b.op("Tanh", {b.op("Mul", {number(o, std::sqrt(2.0 / M_PI)), b.op("Add", {x, cubic})})});
  } else {
    inner = b.op("Erf", {b.op("Div", {x, number(o, std::sqrt(2.0))})});
  }
  return {b.op("Mul", {b.op("Mul", {x, number(o, 0.5)}), b.op("Add", {inner, number(o, 1)})})};
}

OnnxValue siluOnnx(const OnnxOp& o) { return {o.b.op("Mul", {o.tensor(0), o.b.op("Sigmoid", {o.tensor(0)})})}; }

OnnxValue mishOnnx(const OnnxOp& o) {
  return {o.b.op("Mul", {o.tensor(0), o.b.op("Tanh", {o.b.op("Softplus", {o.tensor(0)})})})};
}

// PyTorch's hardsigmoid is relu6(x + 3) / 6: ONNX's with alpha 1/6, beta 1/2.
OnnxValue hardsigmoidOnnx(const OnnxOp& o) {
  return {o.b.op("HardSigmoid", {o.tensor(0)}, {{"alpha", 1.0 / 6}, {"beta", 0.5}})};
}

OnnxForm withAlphaOnnx(const char* opType) {
  return [opType](const OnnxOp& o) -> OnnxValue {
    return {o.b.op(opType, {o.tensor(0)}, {{"alpha", o.args.number(1)}})};
  };
}

OnnxValue hardtanhOnnx(const OnnxOp& o) {
  return {o.b.op("Clip", {o.tensor(0), number(o, o.args.number(1)), number(o, o.args.number(2))})};
}

// softplus(x, beta, threshold): x where beta·x > threshold, else log(1 + exp(beta·x)) / beta.
OnnxValue softplusOnnx(const OnnxOp& o) {
  OnnxBuilder& b = o.b;
  const std::string x = o.tensor(0), beta = number(o, o.args.number(1));
  const std::string scaled = b.op("Mul", {x, beta});
  return {b.op("Where", {b.op("Greater", {scaled, number(o, o.args.number(2))}), x,
                         b.op("Div", {b.op("Softplus", {scaled}), beta})})};
}

OnnxForm alongAxisOnnx(const char* opType) {
  return [opType](const OnnxOp& o) -> OnnxValue {
    return {o.b.op(opType, {o.tensor(0)}, {{"axis", normalizedDim(o.constant(1), o.rank(0))}})};
  };
}

}  // namespace

OpRows activationOps() {
  return {
      torchUnary("relu", at::relu, onnxUnary("Relu")),
      torchUnary("sigmoid", at::sigmoid, onnxUnary("Sigmoid")),
      torchUnary("tanh", at::tanh, onnxUnary("Tanh")),
      torchUnary("silu", at::silu, siluOnnx),
      torchUnary("mish", at::mish, mishOnnx),
      torchUnary("hardswish", at::hardswish, onnxUnary("HardSwish")),
      torchUnary("hardsigmoid", at::hardsigmoid, hardsigmoidOnnx),
      {"gelu", gelu,
       [](const GraphNode&, const ScriptArgs& a) { return "torch.gelu(" + a[0] + ", approximate=" + a[1] + ")"; },
       geluOnnx},
      {"leakyRelu", withNumbers([](const at::Tensor& x, double s) { return at::leaky_relu(x, s); }),
       realsScript("torch.leaky_relu"), withAlphaOnnx("LeakyRelu")},
      {"elu", withNumbers([](const at::Tensor& x, double alpha) { return at::elu(x, alpha); }),
       realsScript("torch.elu"), withAlphaOnnx("Elu")},
      {"hardtanh", withNumbers([](const at::Tensor& x, double low, double high) { return at::hardtanh(x, low, high); }),
       realsScript("torch.hardtanh"), hardtanhOnnx},
      {"softplus",
       withNumbers([](const at::Tensor& x, double beta, double threshold) { return at::softplus(x, beta, threshold); }),
       realsScript("torch.softplus"), softplusOnnx},
      {"softmax", alongDim([](const at::Tensor& x, int64_t d) { return at::softmax(x, d); }),
       scriptCall("torch.softmax"), alongAxisOnnx("Softmax")},
      {"logSoftmax", alongDim([](const at::Tensor& x, int64_t d) { return at::log_softmax(x, d); }),
       scriptCall("torch.log_softmax"), alongAxisOnnx("LogSoftmax")},
  };
}

}  // namespace firebrand
