// How a DatasetLoader assembles batches (dataset_loader.h).
#pragma once
#include <cstdint>
#include <optional>

namespace firebrand {

struct LoaderOptions {
  // Background threads assembling batches; 0 cuts each batch on the training
  // thread. Unset ("auto"): one when batches are transformed or pinned, work
  // worth overlapping with a step; none otherwise, since cutting plain rows
  // costs less than handing a batch between threads (measured: 20 us a step).
  std::optional<int64_t> numWorkers;
  // Batches queued ahead per worker.
  int64_t prefetchFactor = 2;
  // Page-locks batches so CUDA copies them asynchronously (set by the engine on CUDA).
  bool pinMemory = false;

  int64_t workerCount(bool transformed) const { return numWorkers.value_or(transformed || pinMemory ? 1 : 0); }
};

}  // namespace firebrand
