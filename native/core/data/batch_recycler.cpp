#include "core/data/batch_recycler.h"

#include <ATen/core/Tensor.h>

namespace firebrand {
namespace {

// Held here only: no other tensor, view or saved variable shares its memory.
bool unused(const Batch& batch) {
  for (const auto& entry : batch.fields) {
    const at::Tensor& tensor = entry.second;
    if (tensor.use_count() != 1 || !tensor.has_storage() || tensor.storage().use_count() != 1) return false;
  }
  return true;
}

}  // namespace

std::optional<Batch> BatchRecycler::takeUnused() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (unused(*it)) {
      Batch batch = std::move(*it);
      kept_.erase(it);
      return batch;
    }
  }
  return std::nullopt;
}

void BatchRecycler::keep(const Batch& batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.push_back(batch);
  if (kept_.size() > capacity_) kept_.pop_front();
}

}  // namespace firebrand
