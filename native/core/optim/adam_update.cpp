#include "core/optim/adam_update.h"

#include "core/optim/rounding_kernels.h"

// Compiled with -ffp-contract=off (CMakeLists.txt): every fused multiply-add here is an explicit std::fma.
namespace firebrand {
namespace {

// The coefficients as libtorch applies them: its Scalars cast to the tensor's type.
template <typename T>
struct Factors {
  T weightDecay;      // Adam's L2 term
  T decayedFraction;  // AdamW's 1 - lr * weightDecay
  T beta1;
  T oneMinusBeta1;
  T beta2;
  T oneMinusBeta2;
  T biasCorrection2Sqrt;
  T eps;
  T negativeStepSize;  // -lr / (1 - beta1^step)
};

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
    if constexpr (kDecay == AdamWeightDecay::L2) g = rounding::multiplyAdd<kRoundOnce>(factors.weightDecay, p, g);
    if constexpr (kDecay == AdamWeightDecay::Decoupled) p = p * factors.decayedFraction;
    const T m = rounding::multiplyAdd<kRoundOnce>(factors.oneMinusBeta1, g, expAvg[i] * factors.beta1);
    const T v = rounding::multiplyAdd<kRoundOnce>(factors.oneMinusBeta2 * g, g, expAvgSq[i] * factors.beta2);
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

template <bool kRoundOnce>
struct UpdateRange {
  template <typename T>
  __attribute__((always_inline)) static void run(int64_t begin, int64_t end, const AdamSlice<T>& slice,
                                                 const Factors<T>& factors, const AdamWeightDecay& decay) {
    switch (decay) {
      case AdamWeightDecay::None:
        return updateWithDecay<kRoundOnce, AdamWeightDecay::None>(slice, factors, begin, end);
      case AdamWeightDecay::L2:
        return updateWithDecay<kRoundOnce, AdamWeightDecay::L2>(slice, factors, begin, end);
      case AdamWeightDecay::Decoupled:
        return updateWithDecay<kRoundOnce, AdamWeightDecay::Decoupled>(slice, factors, begin, end);
    }
  }
};

template <typename T>
void update(const AdamSlice<T>& slice, const AdamCoefficients& options) {
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
  rounding::runOverElements<UpdateRange>(options.roundOnce, slice.size, slice, factors, options.decay);
}

}  // namespace

void adamUpdate(const AdamSlice<float>& slice, const AdamCoefficients& coefficients) { update(slice, coefficients); }
void adamUpdate(const AdamSlice<double>& slice, const AdamCoefficients& coefficients) { update(slice, coefficients); }

}  // namespace firebrand
