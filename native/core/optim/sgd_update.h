// SGD's update of one parameter in a single pass over its elements, for
// FusedSgd (fused_sgd.h). It computes what libtorch's per-op step computes
//   d = grad + weightDecay * p
//   buf = first ? d : buf * momentum + (1 - dampening) * d
//   d = nesterov ? d + momentum * buf : buf        (with momentum)
//   p = p - lr * d
// rounding each `x + alpha * y` the way libtorch's add kernel does on this
// machine (kernel_rounding.h), so the two steps give the same bits.
#pragma once
#include <cstdint>

namespace firebrand {

struct SgdCoefficients {
  double lr = 0;
  double momentum = 0;
  double dampening = 0;
  double weightDecay = 0;
  bool nesterov = false;
  // The momentum buffer is new: it starts as d (libtorch: clone(d)).
  bool firstMomentumStep = false;
};

// One parameter's memory: element i of each array is the same element. The
// buffer is null without momentum.
template <typename T>
struct SgdSlice {
  T* parameter = nullptr;
  const T* grad = nullptr;
  T* momentumBuffer = nullptr;
  int64_t size = 0;
};

// Updates the parameter (and momentum buffer) in place, on libtorch's intra-op threads when large.
void sgdUpdate(const SgdSlice<float>& slice, const SgdCoefficients& coefficients);
void sgdUpdate(const SgdSlice<double>& slice, const SgdCoefficients& coefficients);

}  // namespace firebrand
