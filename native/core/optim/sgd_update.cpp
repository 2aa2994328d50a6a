#include "core/optim/sgd_update.h"

#include "core/optim/kernel_rounding.h"
#include "core/optim/rounding_kernels.h"

namespace firebrand {
namespace {

// The coefficients as libtorch applies them: its Scalars cast to the tensor's type.
template <typename T>
struct Factors {
  T negativeLr;
  T momentum;
  T undampened;  // 1 - dampening
  T weightDecay;
};

// x + alpha * y, as libtorch's add kernel computes it.
template <bool kRoundOnce, typename T>
inline T addScaled(T x, T alpha, T y) {
  return rounding::multiplyAdd<kRoundOnce>(alpha, y, x);
}

enum class Momentum { None, First, Running };

// One loop per combination of options, so that each compiles to branch-free (vector) code.
template <bool kRoundOnce, bool kDecay, Momentum kMomentum, bool kNesterov, typename T>
__attribute__((always_inline)) inline void updateLoop(const SgdSlice<T>& slice, const Factors<T>& factors,
                                                      int64_t begin, int64_t end) {
  T* __restrict parameter = slice.parameter;
  const T* __restrict grad = slice.grad;
  T* __restrict buffer = slice.momentumBuffer;
  for (int64_t i = begin; i < end; ++i) {
    T d = grad[i];
    if constexpr (kDecay) d = addScaled<kRoundOnce>(d, factors.weightDecay, parameter[i]);
    if constexpr (kMomentum != Momentum::None) {
      T momentum = d;
      if constexpr (kMomentum == Momentum::Running) {
        momentum = addScaled<kRoundOnce>(buffer[i] * factors.momentum, factors.undampened, d);
      }
      buffer[i] = momentum;
      d = kNesterov ? addScaled<kRoundOnce>(d, factors.momentum, momentum) : momentum;
    }
    parameter[i] = addScaled<kRoundOnce>(parameter[i], factors.negativeLr, d);
  }
}

template <bool kRoundOnce, bool kDecay, Momentum kMomentum, typename T>
__attribute__((always_inline)) inline void updateWithMomentum(const SgdSlice<T>& slice, const Factors<T>& factors,
                                                              const SgdCoefficients& options, int64_t begin,
                                                              int64_t end) {
  if (options.nesterov) {
    updateLoop<kRoundOnce, kDecay, kMomentum, true>(slice, factors, begin, end);
  } else {
    updateLoop<kRoundOnce, kDecay, kMomentum, false>(slice, factors, begin, end);
  }
}

template <bool kRoundOnce, bool kDecay, typename T>
__attribute__((always_inline)) inline void updateWithDecay(const SgdSlice<T>& slice, const Factors<T>& factors,
                                                           const SgdCoefficients& options, int64_t begin, int64_t end) {
  if (slice.momentumBuffer == nullptr) {
    updateLoop<kRoundOnce, kDecay, Momentum::None, false>(slice, factors, begin, end);
  } else if (options.firstMomentumStep) {
    updateWithMomentum<kRoundOnce, kDecay, Momentum::First>(slice, factors, options, begin, end);
  } else {
    updateWithMomentum<kRoundOnce, kDecay, Momentum::Running>(slice, factors, options, begin, end);
  }
}

template <bool kRoundOnce>
struct UpdateRange {
  template <typename T>
  __attribute__((always_inline)) static void run(int64_t begin, int64_t end, const SgdSlice<T>& slice,
                                                 const Factors<T>& factors, const SgdCoefficients& options) {
    if (options.weightDecay != 0) {
      updateWithDecay<kRoundOnce, true>(slice, factors, options, begin, end);
    } else {
      updateWithDecay<kRoundOnce, false>(slice, factors, options, begin, end);
    }
  }
};

template <typename T>
void update(const SgdSlice<T>& slice, const SgdCoefficients& options) {
  const Factors<T> factors{static_cast<T>(-options.lr), static_cast<T>(options.momentum),
                           static_cast<T>(1 - options.dampening), static_cast<T>(options.weightDecay)};
  rounding::runOverElements<UpdateRange>(libtorchAddRoundsOnce<T>(), slice.size, slice, factors, options);
}

}  // namespace

void sgdUpdate(const SgdSlice<float>& slice, const SgdCoefficients& coefficients) { update(slice, coefficients); }
void sgdUpdate(const SgdSlice<double>& slice, const SgdCoefficients& coefficients) { update(slice, coefficients); }

}  // namespace firebrand
