// Batches handed over by a producer on another thread (JavaScript's) to a
// training epoch, through a bounded queue: a fast producer waits for room
// instead of filling memory. The producer ends the stream with finish() or
// fail(); the consumer's close() (done, stopped or failed) tells it to stop.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "core/data/batch_stream.h"

namespace firebrand {

class BatchQueue : public BatchStream {
 public:
  // `batchCount`: the batches the producer will send, when it knows.
  BatchQueue(int64_t capacity, std::optional<int64_t> batchCount);

  // Producer side. Adds a batch (dropped once the consumer has closed);
  // returns whether there is room for another.
  bool push(Batch batch);
  // Calls `ready(open)` once there is room (open: true) or the consumer has
  // closed (open: false): at once, or later from the consumer's thread.
  void whenRoom(std::function<void(bool open)> ready);
  void finish();
  void fail(const std::string& message);
  bool closed() const;

  // Consumer side.
  std::optional<Batch> next() override;
  std::optional<int64_t> batchCount() const override { return batchCount_; }
  bool checkEachBatch() const override { return true; }
  void close() override;

 private:
  // Hands the room waiter its answer if one is due; called with the lock held,
  // returns the call to make after unlocking.
  std::function<void()> takeDueWaiter();

  const int64_t capacity_;
  const std::optional<int64_t> batchCount_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Batch> batches_;
  std::function<void(bool)> roomWaiter_;
  bool finished_ = false;
  std::string failure_;
  bool closed_ = false;
};

}  // namespace firebrand
