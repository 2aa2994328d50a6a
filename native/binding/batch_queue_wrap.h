// JS handle of a core BatchQueue: the TypeScript pump pushes batches of
// TypedArrays from an async iterable while an epoch consumes them.
#pragma once
#include <napi.h>

#include <memory>

#include "core/data/batch_queue.h"

namespace firebrand::binding {

class BatchQueueWrap : public Napi::ObjectWrap<BatchQueueWrap> {
 public:
  static void Export(Napi::Env env, Napi::Object exports);
  // The queue behind a JS value, or nullptr when it is not a NativeBatchQueue.
  static std::shared_ptr<BatchQueue> From(const Napi::Value& value);

  // new NativeBatchQueue(queueDepth, batchesPerEpoch?)
  explicit BatchQueueWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value Push(const Napi::CallbackInfo& info);
  Napi::Value WaitForRoom(const Napi::CallbackInfo& info);
  void Finish(const Napi::CallbackInfo& info);
  void Fail(const Napi::CallbackInfo& info);
  Napi::Value Closed(const Napi::CallbackInfo& info);

  std::shared_ptr<BatchQueue> queue_;
};

}  // namespace firebrand::binding
