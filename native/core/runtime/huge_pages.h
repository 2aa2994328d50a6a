// Decoding streams every weight once per token. On 4 KB pages the CPU's
// prefetchers stop at each page's end and each page costs a TLB walk: one core
// read a 160 MB buffer at 14-16 GB/s here, 22-25 GB/s once 2 MB transparent
// huge pages backed it (the triad: 23.5). A model's weights are mostly tensors
// smaller than 2 MB, side by side in malloc's heap, so the 2 MB regions that
// hold them are collapsed into huge pages after they are written
// (MADV_COLLAPSE, Linux 6.1): the kernel copies each region once, and
// contents and addresses stay. Not advised before they are written: with the
// kernel's default THP defrag a fault in advised memory compacts first
// (cpu_memory_cache.h).
#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

namespace firebrand {

// Backs the 2 MB regions holding these tensors' CPU storages with transparent huge pages. A hint:
// nothing changes on a kernel without MADV_COLLAPSE, where the kernel finds no free huge page, or where
// the system turned transparent huge pages off (enabled: never).
void backWithHugePages(const std::vector<at::Tensor>& tensors);

}  // namespace firebrand
