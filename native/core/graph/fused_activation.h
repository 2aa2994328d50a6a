// The activation a lowered convolution or linear layer runs inside it (inference_folding.h,
// linear_lowering.h): oneDNN's post-op where the layer is packed, else applied on its output.
#pragma once
#include <ATen/ATen.h>

#include <optional>

#include "core/graph/module_spec.h"

namespace firebrand {

enum class FusedActivation { None, Relu, Hardswish, Hardsigmoid, Gelu, GeluTanh, Silu };

// The activation graph node `index` computes, if it is one a layer can run inside it.
std::optional<FusedActivation> fusedActivationOf(const GraphNode& node, size_t index);

// `x` with the activation applied (PyTorch's own op, in place where it has one).
at::Tensor applyActivation(at::Tensor& x, FusedActivation activation);

}  // namespace firebrand
