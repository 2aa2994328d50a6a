#include "core/graph/fused_activation.h"

namespace firebrand {

std::optional<FusedActivation> fusedActivationOf(const std::string& op) {
  if (op == "relu") return FusedActivation::Relu;
  if (op == "hardswish") return FusedActivation::Hardswish;
  if (op == "hardsigmoid") return FusedActivation::Hardsigmoid;
  return std::nullopt;
}

at::Tensor& applyActivation(at::Tensor& x, FusedActivation activation) {
  switch (activation) {
    case FusedActivation::Relu:
      return x.relu_();
    case FusedActivation::Hardswish:
      return at::hardswish_(x);
    case FusedActivation::Hardsigmoid:
      return at::hardsigmoid_(x);
    case FusedActivation::None:
      break;
  }
  return x;
}

}  // namespace firebrand
