// Where an epoch's batches come from, in order: a dataset cut by the loader
// (dataset_loader.h) or batches fed from JavaScript (batch_queue.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/data/batch.h"

namespace firebrand {

class BatchStream {
 public:
  virtual ~BatchStream() = default;
  // The next batch, on the CPU; nullopt once the epoch's batches are done.
  virtual std::optional<Batch> next() = 0;
  // Batches in the whole epoch, or nullopt when the source cannot know.
  virtual std::optional<int64_t> batchCount() const = 0;
  // Index of the first batch next() returns (non-zero when resuming mid-epoch).
  virtual int64_t firstBatch() const { return 0; }
  // Whether next() may hand out untrusted data that each batch must be checked for.
  virtual bool checkEachBatch() const { return false; }
  // What the inputs are made from, when errors about their shape should say it ("" otherwise).
  virtual std::string inputOrigin() const { return {}; }
  // The consumer is done with the stream (finished, stopped or failed).
  virtual void close() {}
};

}  // namespace firebrand
