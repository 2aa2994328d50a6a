#include "core/runtime/cpu_features.h"

#include "core/runtime/kernel_settings.h"

namespace firebrand {
namespace {

// Whether FIREBRAND_CPU_BASELINE is `value` ("1": portable kernels, "avx2": no AVX-512 ones).
bool baselineIs(const char* value) { return kernelSetting("FIREBRAND_CPU_BASELINE") == value; }

}  // namespace

bool detectFma() {
#if defined(__x86_64__)
  return !baselineIs("1") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool detectAvx512() {
#if defined(__x86_64__)
  return cpuHasFma() && !baselineIs("avx2") && __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

}  // namespace firebrand
