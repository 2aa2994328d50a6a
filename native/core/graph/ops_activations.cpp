// Activations: torch.nn.functional's nonlinearities and softmax.
#include <ATen/Functions.h>

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

}  // namespace

OpRows activationOps() {
  return {
      torchUnary("relu", at::relu),
      torchUnary("sigmoid", at::sigmoid),
      torchUnary("tanh", at::tanh),
      torchUnary("silu", at::silu),
      torchUnary("mish", at::mish),
      torchUnary("hardswish", at::hardswish),
      torchUnary("hardsigmoid", at::hardsigmoid),
      {"gelu", gelu,
       [](const GraphNode&, const ScriptArgs& a) { return "torch.gelu(" + a[0] + ", approximate=" + a[1] + ")"; }},
      {"leakyRelu", withNumbers([](const at::Tensor& x, double s) { return at::leaky_relu(x, s); }),
       realsScript("torch.leaky_relu")},
      {"elu", withNumbers([](const at::Tensor& x, double alpha) { return at::elu(x, alpha); }),
       realsScript("torch.elu")},
      {"hardtanh", withNumbers([](const at::Tensor& x, double low, double high) { return at::hardtanh(x, low, high); }),
       realsScript("torch.hardtanh")},
      {"softplus",
       withNumbers([](const at::Tensor& x, double beta, double threshold) { return at::softplus(x, beta, threshold); }),
       realsScript("torch.softplus")},
      {"softmax", alongDim([](const at::Tensor& x, int64_t d) { return at::softmax(x, d); }),
       scriptCall("torch.softmax")},
      {"logSoftmax", alongDim([](const at::Tensor& x, int64_t d) { return at::log_softmax(x, d); }),
       scriptCall("torch.log_softmax")},
  };
}

}  // namespace firebrand
