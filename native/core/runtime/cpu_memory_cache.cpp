#include "core/runtime/cpu_memory_cache.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/compat/torch_compat.h"

namespace firebrand {
namespace {

constexpr size_t kSmallestCached = size_t{256} << 10;
constexpr size_t kHugePage = size_t{2} << 20;  // large blocks' unit: fewer distinct sizes to match
constexpr size_t kPage = 4096;
constexpr size_t kAlignment = 64;  // c10's, which vectorized kernels assume

size_t roundedUp(size_t bytes, size_t unit) { return (bytes + unit - 1) / unit * unit; }

struct Blocks {
  std::mutex mutex;
  int openScopes = 0;
  int retainers = 0;
  std::unordered_map<void*, size_t> live;     // cached-class block -> its size
  std::map<size_t, std::vector<void*>> idle;  // size -> blocks freed for reuse, by size for the best fit
  size_t liveBytes = 0;
  size_t idleBytes = 0;
  size_t peakLiveBytes = 0;
  // By size: blocks live now, and the most live at once. A step that repeats needs that many of each size
  // (its working set), more than the peak of live bytes when sizes peak at different times.
  std::unordered_map<size_t, size_t> liveCount, peakCount;
  size_t workingSetBytes = 0;
  // Idle blocks that prefault made for allocations still to come: the cap leaves room for them
  // beside the peak of live bytes until they are taken.
  std::unordered_set<void*> reserved;
  size_t reservedBytes = 0;

  void emptyIdle() {
    for (auto& [size, blocks] : idle) {
      for (void* block : blocks) std::free(block);
    }
    idle.clear();
    idleBytes = 0;
    reserved.clear();
    reservedBytes = 0;
    peakLiveBytes = liveBytes;
    peakCount = liveCount;
    workingSetBytes = liveBytes;
  }

  void noteLive(size_t size) {
    liveBytes += size;
    if (liveBytes > peakLiveBytes) peakLiveBytes = liveBytes;
    size_t& peak = peakCount[size];
    if (++liveCount[size] > peak) {
      ++peak;
      workingSetBytes += size;
    }
  }

  // An idle block for a request of `size` bytes: one of that size, else the smallest up to twice as large (a forward
  // whose values go as soon as read has many sizes, few live at once); its size, or null.
  std::pair<void*, size_t> takeIdle(size_t size) {
    const auto fit = idle.lower_bound(size);
    if (fit == idle.end() || fit->first > 2 * size) return {nullptr, 0};
    const size_t blockSize = fit->first;
    void* block = fit->second.back();
    fit->second.pop_back();
    if (fit->second.empty()) idle.erase(fit);
    idleBytes -= blockSize;
    if (reserved.erase(block) > 0) reservedBytes -= blockSize;
    return {block, blockSize};
  }

  // Whether a block of `size` just freed may stay: the blocks held (live and idle) stay within the working
  // set, and within twice the peak of live bytes when shapes vary (a size seen once holds no memory for long).
  bool keeps(size_t size) const {
    return idleBytes + liveBytes + size <= std::min(workingSetBytes, 2 * peakLiveBytes) + reservedBytes;
  }
};

// Never destroyed: tensors may be freed while the process exits.
Blocks& blocks() {
  static auto* state = new Blocks();
  return *state;
}

void* freshBlock(size_t size) {
  const size_t alignment = size >= kHugePage ? kHugePage : kAlignment;
  void* block = nullptr;
  if (posix_memalign(&block, alignment, size) != 0) {
    TORCH_CHECK(false, "DefaultCPUAllocator: not enough memory: you tried to allocate ", size, " bytes.");
  }
  return block;
}

// The one deleter of every block this allocator hands out (c10 requires one,
// for raw_allocate): a block it cached goes back to the cache or the system,
// any other to c10's free.
void release(void* block) {
  Blocks& state = blocks();
  std::unique_lock lock(state.mutex);
  const auto found = state.live.find(block);
  if (found == state.live.end()) {
    lock.unlock();
    c10::free_cpu(block);
    return;
  }
  const size_t size = found->second;
  state.live.erase(found);
  state.liveBytes -= size;
  --state.liveCount[size];
  if (state.openScopes > 0 && state.keeps(size)) {
    state.idle[size].push_back(block);
    state.idleBytes += size;
    return;
  }
  lock.unlock();
  std::free(block);
}

class CachingCpuAllocator final : public compat::AllocatorAdapter<> {
 public:
  c10::DataPtr allocateData(size_t bytes) const override {
    const c10::Device cpu(c10::DeviceType::CPU);
    Blocks& state = blocks();
    if (bytes >= kSmallestCached) {
      const size_t size = roundedUp(bytes, bytes >= kHugePage ? kHugePage : kPage);
      std::unique_lock lock(state.mutex);
      if (state.openScopes > 0) {
        auto [block, blockSize] = state.takeIdle(size);
        if (!block) {
          lock.unlock();
          block = freshBlock(size);
          blockSize = size;
          lock.lock();
        }
        state.live.emplace(block, blockSize);
        state.noteLive(blockSize);
        return {block, block, &release, cpu};
      }
    }
    void* block = c10::alloc_cpu(bytes);
    return {block, block, &release, cpu};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }
};

void installOnce() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    static CachingCpuAllocator allocator;
    // Above the priority c10 registers its default with, so it stays in place.
    c10::SetCPUAllocator(&allocator, /*priority=*/1);
  });
}

}  // namespace

CpuMemoryCache::Scope::Scope() {
  installOnce();
  Blocks& state = blocks();
  const std::lock_guard lock(state.mutex);
  ++state.openScopes;
}

CpuMemoryCache::Scope::~Scope() {
  Blocks& state = blocks();
  const std::lock_guard lock(state.mutex);
  if (--state.openScopes == 0 && state.retainers == 0) state.emptyIdle();
}

CpuMemoryCache::Retainer::Retainer() {
  installOnce();
  Blocks& state = blocks();
  const std::lock_guard lock(state.mutex);
  ++state.retainers;
}

CpuMemoryCache::Retainer::~Retainer() {
  Blocks& state = blocks();
  const std::lock_guard lock(state.mutex);
  if (--state.retainers == 0 && state.openScopes == 0) state.emptyIdle();
}

void CpuMemoryCache::prefault(const std::vector<size_t>& blockBytes) {
  Blocks& state = blocks();
  for (const size_t bytes : blockBytes) {
    if (bytes < kSmallestCached) continue;
    const size_t size = roundedUp(bytes, bytes >= kHugePage ? kHugePage : kPage);
    void* block = freshBlock(size);
    std::memset(block, 0, size);
    const std::lock_guard lock(state.mutex);
    if (state.openScopes == 0) {
      std::free(block);
      return;
    }
    state.idle[size].push_back(block);
    state.idleBytes += size;
    state.reserved.insert(block);
    state.reservedBytes += size;
  }
}

size_t CpuMemoryCache::idleBytes() {
  Blocks& state = blocks();
  const std::lock_guard lock(state.mutex);
  return state.idleBytes;
}

}  // namespace firebrand
