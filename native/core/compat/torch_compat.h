// Every difference between the libtorch versions firebrand builds against
// (Debian's 1.13 and 2.x wheels) lives here, keyed on TORCH_VERSION_MAJOR/MINOR.
#pragma once
#include <torch/optim/optimizer.h>
#include <torch/version.h>

#define FIREBRAND_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||            \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace firebrand::compat {

// Frees gradients instead of filling them with zeros (PyTorch's set_to_none):
// 1.13's Optimizer::zero_grad() has no such argument.
inline void zeroGradToNone(torch::optim::Optimizer& optimizer) {
#if FIREBRAND_TORCH_AT_LEAST(2, 0)
  optimizer.zero_grad(/*set_to_none=*/true);
#else
  for (auto& group : optimizer.param_groups()) {
    for (auto& parameter : group.params()) {
      parameter.mutable_grad().reset();
    }
  }
#endif
}

}  // namespace firebrand::compat
