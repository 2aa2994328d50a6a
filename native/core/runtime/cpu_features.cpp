#include "core/runtime/cpu_features.h"

#include <cstdlib>
#include <cstring>

namespace firebrand {

bool cpuHasFma() {
#if defined(__x86_64__)
  static const bool has = [] {
    const char* baseline = std::getenv("FIREBRAND_CPU_BASELINE");
    if (baseline != nullptr && std::strcmp(baseline, "1") == 0) return false;
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
#else
  return false;
#endif
}

bool cpuHasAvx512() {
#if defined(__x86_64__)
  static const bool has = [] {
    const char* baseline = std::getenv("FIREBRAND_CPU_BASELINE");
    if (baseline != nullptr && std::strcmp(baseline, "avx2") == 0) return false;
    return cpuHasFma() && __builtin_cpu_supports("avx512f");
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace firebrand
