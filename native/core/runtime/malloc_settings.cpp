#include "core/runtime/malloc_settings.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace firebrand {
namespace {

bool processChoseItsOwn() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && (std::strstr(tunables, "glibc.malloc.mmap_threshold") != nullptr ||
                              std::strstr(tunables, "glibc.malloc.trim_threshold") != nullptr)) {
    return true;
  }
  return std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr || std::getenv("MALLOC_TRIM_THRESHOLD_") != nullptr;
}

}  // namespace

void keepFreedMemoryForReuse() {
#if defined(__GLIBC__)
  static std::once_flag applied;
  std::call_once(applied, [] {
    if (processChoseItsOwn()) return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum on 64-bit
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
  });
#endif
}

void releaseFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace firebrand
