// A parameter's gradient accumulator, the autograd Node DDP-style hooks hang
// on: torch::autograd::impl::grad_accumulator returns a std::shared_ptr up to
// 2.x and a c10::intrusive_ptr in 2.14; whichever it is, this is its type.
#pragma once
#include <torch/csrc/autograd/variable.h>

#include <utility>

namespace firebrand::compat {

using GradAccumulator = decltype(torch::autograd::impl::grad_accumulator(std::declval<const at::Tensor&>()));

}  // namespace firebrand::compat
