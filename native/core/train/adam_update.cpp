#include "core/train/adam_update.h"

#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>  // at::internal::GRAIN_SIZE

#include <cmath>

#include "core/train/kernel_rounding.h"

// Compiled with -ffp-contract=off (CMakeLists.txt): every fused multiply-add here is an explicit std::fma.
namespace firebrand {
namespace {

// The coefficients as libtorch applies them: its Scalars cast to the tensor's type.
template <typename T>
struct Factors {
  T weightDecay;  // Adam's L2 term
  T decayedFraction;  // AdamW's 1 - lr * weightDecay
  T beta1;
  T oneMinusBeta1;
  T beta2;
  T oneMinusBeta2;
  T biasCorrection2Sqrt;
  T eps;
  T negativeStepSize;  // -lr / (1 - beta1^step)
};

template <bool kRoundOnce, typename T>
inline T multiplyAdd(T a, T b, T c) {
  if constexpr (kRoundOnce) {
    return std::fma(a, b, c);
  } else {
    return a * b + c;
  }
}

// libtorch's maximum: NaN if either is.
template <typename T>
inline T maximum(T a, T b) {
  if (a != a || b != b) return a != a ? a : b;
  return a > b ? a : b;
}

// One loop per combination of options, so that each compiles to branch-free (vector) code.
template <bool kRoundOnce, AdamWeightDecay kDecay, bool kAmsgrad, typename T>
__attribute__((always_inline)) inline void updateLoop(const AdamSlice<T>& slice, const Factors<T>& factors,
                                                      int64_t begin, int64_t end) {
  T* __restrict parameter = slice.parameter;
  const T* __restrict grad = slice.grad;
  T* __restrict expAvg = slice.expAvg;
  T* __restrict expAvgSq = slice.expAvgSq;
  T* __restrict maxExpAvgSq = slice.maxExpAvgSq;
  for (int64_t i = begin; i < end; ++i) {
    T p = parameter[i];
    T g = grad[i];
    if constexpr (kDecay == AdamWeightDecay::L2) g = multiplyAdd<kRoundOnce>(factors.weightDecay, p, g);
    if constexpr (kDecay == AdamWeightDecay::Decoupled) p = p * factors.decayedFraction;
    const T m = multiplyAdd<kRoundOnce>(factors.oneMinusBeta1, g, expAvg[i] * factors.beta1);
    const T v = multiplyAdd<kRoundOnce>(factors.oneMinusBeta2 * g, g, expAvgSq[i] * factors.beta2);
    expAvg[i] = m;
    expAvgSq[i] = v;
    T second = v;
    if constexpr (kAmsgrad) {
      second = maximum(v, maxExpAvgSq[i]);
      maxExpAvgSq[i] = second;
    }
    const T denominator = std::sqrt(second) / factors.biasCorrection2Sqrt + factors.eps;
    parameter[i] = p + factors.negativeStepSize * m / denominator;
  }
}

template <bool kRoundOnce, AdamWeightDecay kDecay, typename T>
__attribute__((always_inline)) inline void updateWithDecay(const AdamSlice<T>& slice, const Factors<T>& factors,
                                                           int64_t begin, int64_t end) {
  if (slice.maxExpAvgSq != nullptr) {
    updateLoop<kRoundOnce, kDecay, true>(slice, factors, begin, end);
  } else {
    updateLoop<kRoundOnce, kDecay, false>(slice, factors, begin, end);
  }
}

template <bool kRoundOnce, typename T>
__attribute__((always_inline)) inline void updateRange(const AdamSlice<T>& slice, const Factors<T>& factors,
                                                       AdamWeightDecay decay, int64_t begin, int64_t end) {
  switch (decay) {
    case AdamWeightDecay::None:
      return updateWithDecay<kRoundOnce, AdamWeightDecay::None>(slice, factors, begin, end);
    case AdamWeightDecay::L2:
      return updateWithDecay<kRoundOnce, AdamWeightDecay::L2>(slice, factors, begin, end);
    case AdamWeightDecay::Decoupled:
      return updateWithDecay<kRoundOnce, AdamWeightDecay::Decoupled>(slice, factors, begin, end);
  }
}

template <typename T>
void updateRoundingTwice(const AdamSlice<T>& slice, const Factors<T>& factors, AdamWeightDecay decay, int64_t begin,
                         int64_t end) {
  updateRange<false>(slice, factors, decay, begin, end);
}

// Without an FMA instruction to inline, std::fma is a library call: correct, slower.
template <typename T>
void updateRoundingOnce(const AdamSlice<T>& slice, const Factors<T>& factors, AdamWeightDecay decay, int64_t begin,
                        int64_t end) {
  updateRange<true>(slice, factors, decay, begin, end);
}

#if defined(__x86_64__)
template <typename T>
__attribute__((target("avx2,fma"))) void updateRoundingOnceAvx2(const AdamSlice<T>& slice, const Factors<T>& factors,
                                                                AdamWeightDecay decay, int64_t begin, int64_t end) {
  updateRange<true>(slice, factors, decay, begin, end);
}
#endif

template <typename T>
auto rangeUpdate(bool roundOnce) {
  if (!roundOnce) return &updateRoundingTwice<T>;
#if defined(__x86_64__)
  if (cpuHasFma()) return &updateRoundingOnceAvx2<T>;
#endif
  return &updateRoundingOnce<T>;
}

template <typename T>
void update(const AdamSlice<T>& slice, const AdamCoefficients& options) {
  const auto updateOf = rangeUpdate<T>(options.roundOnce);
  const double biasCorrection1 = 1 - std::pow(options.beta1, static_cast<double>(options.step));
  const double biasCorrection2 = 1 - std::pow(options.beta2, static_cast<double>(options.step));
  const Factors<T> factors{static_cast<T>(options.weightDecay),
                           static_cast<T>(1 - options.lr * options.weightDecay),
                           static_cast<T>(options.beta1),
                           static_cast<T>(1 - options.beta1),
                           static_cast<T>(options.beta2),
                           static_cast<T>(1 - options.beta2),
                           static_cast<T>(std::sqrt(biasCorrection2)),
                           static_cast<T>(options.eps),
                           static_cast<T>(-(options.lr / biasCorrection1))};
  // Split like libtorch's elementwise kernels: no threads below its grain size.
  if (slice.size < at::internal::GRAIN_SIZE) {
    updateOf(slice, factors, options.decay, 0, slice.size);
    return;
  }
  at::parallel_for(0, slice.size, at::internal::GRAIN_SIZE,
                   [&](int64_t begin, int64_t end) { updateOf(slice, factors, options.decay, begin, end); });
}

}  // namespace

void adamUpdate(const AdamSlice<float>& slice, const AdamCoefficients& coefficients) { update(slice, coefficients); }
void adamUpdate(const AdamSlice<double>& slice, const AdamCoefficients& coefficients) { update(slice, coefficients); }

}  // namespace firebrand
