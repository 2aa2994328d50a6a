// Adam's and AdamW's update of one parameter in a single pass over its
// elements, for FusedAdam (fused_adam.h). It computes what libtorch's per-op
// step computes (torch/csrc/api/src/optim/adam.cpp, adamw.cpp)
//   Adam:  g = grad + weightDecay * p          AdamW: p = p * (1 - lr * weightDecay)
//   m = m * beta1 + (1 - beta1) * g
//   v = v * beta2 + (1 - beta2) * g * g        (amsgrad: vmax = max(vmax, v), used below for v)
//   p = p + (-lr / (1 - beta1^step)) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)
// with each coefficient cast to the parameter's type as libtorch casts its
// Scalars, and `x + a * y` rounded once or twice as libtorch's kernels round
// it on this machine (kernel_rounding.h).
#pragma once
#include <cstdint>

namespace firebrand {

enum class AdamWeightDecay { None, L2, Decoupled };

struct AdamCoefficients {
  double lr = 0;
  double beta1 = 0;
  double beta2 = 0;
  double eps = 0;
  double weightDecay = 0;
  AdamWeightDecay decay = AdamWeightDecay::None;
  bool amsgrad = false;
  int64_t step = 1;       // this step's number, from 1
  bool roundOnce = true;  // libtorch's x + a * y rounds once here
};

// One parameter's memory and state: element i of each array is the same
// element. maxExpAvgSq is null without amsgrad.
template <typename T>
struct AdamSlice {
  T* parameter = nullptr;
  const T* grad = nullptr;
  T* expAvg = nullptr;
  T* expAvgSq = nullptr;
  T* maxExpAvgSq = nullptr;
  int64_t size = 0;
};

// Updates the parameter and its state in place, on libtorch's intra-op threads when large.
void adamUpdate(const AdamSlice<float>& slice, const AdamCoefficients& coefficients);
void adamUpdate(const AdamSlice<double>& slice, const AdamCoefficients& coefficients);

}  // namespace firebrand
