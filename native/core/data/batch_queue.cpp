#include "core/data/batch_queue.h"

#include "core/errors.h"

namespace firebrand {

BatchQueue::BatchQueue(int64_t capacity, std::optional<int64_t> batchCount)
    : capacity_(capacity), batchCount_(batchCount) {
  if (capacity < 1) throw InvalidArgument("queueDepth must be a positive integer, got " + std::to_string(capacity));
  if (batchCount && *batchCount < 1) {
    throw InvalidArgument("batchesPerEpoch must be a positive integer, got " + std::to_string(*batchCount));
  }
}

bool BatchQueue::push(Batch batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) throw InvalidState("batch stream: a batch came after the stream finished");
  if (closed_) return false;
  batch.size();  // a batch without fields is an error here, on the producer's side
  batches_.push_back(std::move(batch));
  arrived_.notify_one();
  return static_cast<int64_t>(batches_.size()) < capacity_;
}

std::function<void()> BatchQueue::takeDueWaiter() {
  if (!roomWaiter_) return {};
  const bool open = !closed_;
  if (open && static_cast<int64_t>(batches_.size()) >= capacity_) return {};
  return [ready = std::exchange(roomWaiter_, {}), open] { ready(open); };
}

void BatchQueue::whenRoom(std::function<void(bool open)> ready) {
  std::function<void()> call;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    roomWaiter_ = std::move(ready);
    call = takeDueWaiter();
  }
  if (call) call();
}

void BatchQueue::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  arrived_.notify_one();
}

void BatchQueue::fail(const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  failure_ = message.empty() ? "the producer failed" : message;
  arrived_.notify_one();
}

bool BatchQueue::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

std::optional<Batch> BatchQueue::next() {
  std::function<void()> call;
  std::optional<Batch> batch;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    arrived_.wait(lock, [&] { return !batches_.empty() || finished_; });
    if (batches_.empty()) {
      if (!failure_.empty()) throw InvalidArgument("batch stream: " + failure_);
      return std::nullopt;
    }
    batch = std::move(batches_.front());
    batches_.pop_front();
    call = takeDueWaiter();
  }
  if (call) call();
  return batch;
}

void BatchQueue::close() {
  std::function<void()> call;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    batches_.clear();
    call = takeDueWaiter();
  }
  if (call) call();
}

}  // namespace firebrand
