// A training step frees and allocates the same large tensors every step: a
// Llama step's logits, their log-softmax and its gradient are 65 MB each.
// glibc hands blocks past its mmap threshold (32 MB at most, and a thread's
// arena maps anything past its 64 MB heaps) back to the kernel when freed, so
// every step faults them in again, page by zeroed page. While a
// CpuMemoryCache::Scope is open, CPU blocks of 256 KB and more are kept when
// freed and handed out again for the same size, or failing that for a size at
// least half theirs (the smallest such block), as PyTorch's CUDA caching
// allocator does on the GPU; blocks of 2 MB and more are whole 2 MB units.
// Without that fit, a forward that frees each value once read (a convolution
// network's, of many sizes with few live at once) held one block of every
// size, past the cap below, and gave them back at every call.
// They are not advised as transparent huge pages: under the kernel's THP
// defrag 'madvise' (the default), a fault in an advised region compacts
// memory first, which made a fit's first step 3.4x a steady one at
// SmolLM2-135M's size (1.5x without; steady steps alike). The blocks it holds
// (live and idle) stay within the working set, the sum over sizes of the most
// blocks of that size live at once: a step that repeats then allocates nothing
// new. Held to the peak of live bytes instead, sizes that peak at different
// times (a tied embedding's three gradient blocks at the end of backward) made
// the cache give back a step's blocks and fault them in at every step. Varying
// shapes are held to twice that peak. The cache is emptied when the last scope
// closes, so memory returns to the system between fits, unless a Retainer
// (a model that has predicted) keeps it for the next call.
#pragma once

#include <cstddef>
#include <vector>

namespace firebrand {

class CpuMemoryCache {
 public:
  // Opens the cache on this process's CPU allocations until destroyed;
  // scopes nest and may be opened on several threads at once.
  class Scope {
   public:
    Scope();
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };

  // While one lives, the blocks cached stay when the last scope closes, for the next scope to take
  // (a model that predicts again and again); the last one gone with no scope open empties the cache.
  class Retainer {
   public:
    Retainer();
    ~Retainer();
    Retainer(const Retainer&) = delete;
    Retainer& operator=(const Retainer&) = delete;
  };

  // With a scope open: blocks of these sizes, written once (faulted in) and kept idle, so that the
  // allocations of those sizes that follow (the first step's gradients) take them. Without, nothing.
  static void prefault(const std::vector<size_t>& blockBytes);

  // Bytes held by freed blocks waiting for reuse (zero with no scope open).
  static size_t idleBytes();
};

}  // namespace firebrand
