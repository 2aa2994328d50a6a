// What the fused optimizers' element loops (sgd_update.cpp, adam_update.cpp)
// share: a multiply-add rounded once or twice, each loop built for both
// roundings (and once more for CPUs with an FMA instruction), and the split
// of a parameter's elements over libtorch's threads. Include it only from
// files compiled with -ffp-contract=off (CMakeLists.txt), where no other
// multiply-add is fused.
#pragma once
#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>  // at::internal::GRAIN_SIZE

#include <cmath>
#include <cstdint>

#include "core/optim/kernel_rounding.h"
#include "core/runtime/cpu_features.h"

namespace firebrand::rounding {

// a * b + c, rounded once (a fused multiply-add) or twice.
template <bool kRoundOnce, typename T>
inline T multiplyAdd(T a, T b, T c) {
  if constexpr (kRoundOnce) {
    return std::fma(a, b, c);
  } else {
    return a * b + c;
  }
}

// The builds of a loop `Loop<kRoundOnce>::run(begin, end, args...)`, whose run is always_inline.
template <template <bool> class Loop, typename... Args>
void runRoundingTwice(int64_t begin, int64_t end, const Args&... args) {
  Loop<false>::run(begin, end, args...);
}

// Without an FMA instruction to inline, std::fma is a library call: correct, slower.
template <template <bool> class Loop, typename... Args>
void runRoundingOnce(int64_t begin, int64_t end, const Args&... args) {
  Loop<true>::run(begin, end, args...);
}

#if defined(__x86_64__)
// Compiled for the FMA instruction (vectorized at -O3), used where the CPU has it.
template <template <bool> class Loop, typename... Args>
__attribute__((target("avx2,fma"))) void runRoundingOnceAvx2(int64_t begin, int64_t end, const Args&... args) {
  Loop<true>::run(begin, end, args...);
}
#endif

// Runs the loop over elements [0, size), rounding once or not as libtorch's
// kernels do (`roundOnce`); split like libtorch's elementwise kernels, with no
// threads below its grain size.
template <template <bool> class Loop, typename... Args>
void runOverElements(bool roundOnce, int64_t size, const Args&... args) {
  auto* loop = &runRoundingTwice<Loop, Args...>;
  if (roundOnce) {
    loop = &runRoundingOnce<Loop, Args...>;
#if defined(__x86_64__)
    if (cpuHasFma()) loop = &runRoundingOnceAvx2<Loop, Args...>;
#endif
  }
  if (size < at::internal::GRAIN_SIZE) {
    loop(0, size, args...);
    return;
  }
  at::parallel_for(0, size, at::internal::GRAIN_SIZE, [&](int64_t begin, int64_t end) { loop(begin, end, args...); });
}

}  // namespace firebrand::rounding
