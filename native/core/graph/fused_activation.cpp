#include "core/graph/fused_activation.h"

#include "core/graph/node_args.h"

namespace firebrand {

std::optional<FusedActivation> fusedActivationOf(const GraphNode& node, size_t index) {
  if (node.op == "relu") return FusedActivation::Relu;
  if (node.op == "hardswish") return FusedActivation::Hardswish;
  if (node.op == "hardsigmoid") return FusedActivation::Hardsigmoid;
  if (node.op == "silu") return FusedActivation::Silu;
  if (node.op == "gelu") {
    const std::string approximate = NodeArgs(node, index).text(1);
    if (approximate == "none") return FusedActivation::Gelu;
    if (approximate == "tanh") return FusedActivation::GeluTanh;
  }
  return std::nullopt;
}

at::Tensor applyActivation(at::Tensor& x, FusedActivation activation) {
  switch (activation) {
    case FusedActivation::Relu:
      return x.relu_();
    case FusedActivation::Hardswish:
      return at::hardswish_(x);
    case FusedActivation::Hardsigmoid:
      return at::hardsigmoid_(x);
    case FusedActivation::Gelu:
      return at::gelu(x, "none");
    case FusedActivation::GeluTanh:
      return at::gelu(x, "tanh");
    case FusedActivation::Silu:
      return at::silu_(x);
    case FusedActivation::None:
      break;
  }
  return x;
}

}  // namespace firebrand
