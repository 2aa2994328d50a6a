#include "core/runtime/cpu_features.h"

namespace firebrand {

bool cpuHasFma() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

}  // namespace firebrand
