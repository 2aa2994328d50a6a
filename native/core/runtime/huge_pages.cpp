#include "core/runtime/huge_pages.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1's; glibc 2.36's headers (bookworm) predate it
#endif
#endif

namespace firebrand {
#if defined(__linux__)
namespace {

// MADV_COLLAPSE ignores the system's THP setting; a machine set to 'never' is left alone all the same.
bool hugePagesAllowed() {
  static const bool allowed = [] {
    std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string text;
    std::getline(setting, text);
    return setting && text.find("[never]") == std::string::npos;
  }();
  return allowed;
}

}  // namespace
#endif

void backWithHugePages(const std::vector<at::Tensor>& tensors) {
#if defined(__linux__)
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  if (!hugePagesAllowed()) return;
  std::vector<std::pair<uintptr_t, uintptr_t>> regions;
  for (const at::Tensor& tensor : tensors) {
    if (!tensor.defined() || !tensor.device().is_cpu() || !tensor.has_storage()) continue;
    const auto begin = reinterpret_cast<uintptr_t>(tensor.storage().data());
    const size_t bytes = tensor.storage().nbytes();
    if (begin == 0 || bytes == 0) continue;
    regions.emplace_back(begin & ~(kHugePage - 1), (begin + bytes + kHugePage - 1) & ~(kHugePage - 1));
  }
  std::sort(regions.begin(), regions.end());
  // Region by region: a call whose range meets a mapping the kernel cannot collapse (a guard page, a
  // file, a hole) fails whole. Failures (also an older kernel's EINVAL, EAGAIN when no huge page is
  // free) leave those pages as they were; EAGAIN, transient (memory being compacted), is tried once more.
  uintptr_t done = 0;
  for (const auto& [first, last] : regions) {
    for (uintptr_t region = std::max(first, done); region < last; region += kHugePage) {
      if (madvise(reinterpret_cast<void*>(region), kHugePage, MADV_COLLAPSE) != 0 && errno == EAGAIN)
        madvise(reinterpret_cast<void*>(region), kHugePage, MADV_COLLAPSE);
    }
    done = std::max(done, last);
  }
#else
  (void)tensors;
#endif
}

}  // namespace firebrand
