// How a DatasetLoader assembles batches (dataset_loader.h).
#pragma once
#include <cstdint>

namespace firebrand {

struct LoaderOptions {
  // Background threads assembling batches; 0 cuts each batch on the training thread.
  int64_t numWorkers = 1;
  // Batches queued ahead per worker.
  int64_t prefetchFactor = 2;
  // Page-locks batches so CUDA copies them asynchronously (set by the engine on CUDA).
  bool pinMemory = false;
};

}  // namespace firebrand
