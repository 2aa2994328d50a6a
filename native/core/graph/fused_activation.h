// The activation a lowered convolution runs inside it (inference_folding.h): oneDNN's post-op where the
// convolution is packed, else applied in place on its output.
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <string>

namespace firebrand {

enum class FusedActivation { None, Relu, Hardswish, Hardsigmoid };

// The activation a graph op of this name computes, if it is one a convolution can run inside it.
std::optional<FusedActivation> fusedActivationOf(const std::string& op);

// `x` with the activation applied in place (PyTorch's own op).
at::Tensor& applyActivation(at::Tensor& x, FusedActivation activation);

}  // namespace firebrand
