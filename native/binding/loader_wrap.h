// JS handle of a DatasetLoader: the batches an epoch would train on, handed
// to JavaScript one at a time (to inspect transforms, or to measure the
// loader). next() waits on libuv's pool, never on the event loop.
#pragma once
#include <napi.h>

#include <memory>

#include "binding/operation_lock.h"
#include "binding/promise_worker.h"
#include "core/data/dataset_loader.h"

namespace firebrand::binding {

class LoaderWrap : public Napi::ObjectWrap<LoaderWrap> {
 public:
  static void Export(Napi::Env env, Napi::Object exports);
  static Napi::Object NewInstance(Napi::Env env, std::shared_ptr<DatasetLoader> loader);

  explicit LoaderWrap(const Napi::CallbackInfo& info);

 private:
  // Resolves with the next batch's fields, or undefined after the last.
  Napi::Value Next(const Napi::CallbackInfo& info);
  // Reads the remaining batches in C++ and resolves with { batches, samples, seconds }.
  Napi::Value Drain(const Napi::CallbackInfo& info);
  void Close(const Napi::CallbackInfo& info);
  Napi::Value BatchCount(const Napi::CallbackInfo& info);
  std::function<void()> claim(const char* operation);
  // Runs `task` on libuv's pool, one call at a time.
  Napi::Value onPool(const Napi::CallbackInfo& info, const char* operation,
                     std::function<PromiseWorker::Finish(DatasetLoader&)> task);

  std::shared_ptr<DatasetLoader> loader_;
  OperationLock lock_;
};

}  // namespace firebrand::binding
