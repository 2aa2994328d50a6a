#include "binding/batch_queue_wrap.h"

#include "binding/addon_data.h"
#include "binding/convert.h"
#include "binding/environment_teardown.h"
#include "binding/js_errors.h"
#include "core/errors.h"

namespace firebrand::binding {

void BatchQueueWrap::Export(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(
      env, "NativeBatchQueue",
      {InstanceMethod<&BatchQueueWrap::Push>("push"), InstanceMethod<&BatchQueueWrap::WaitForRoom>("waitForRoom"),
       InstanceMethod<&BatchQueueWrap::Finish>("finish"), InstanceMethod<&BatchQueueWrap::Fail>("fail"),
       InstanceAccessor<&BatchQueueWrap::Closed>("closed")});
  addonData(env).batchQueue = Napi::Persistent(cls);
  exports.Set("NativeBatchQueue", cls);
}

std::shared_ptr<BatchQueue> BatchQueueWrap::From(const Napi::Value& value) {
  if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(addonData(value.Env()).batchQueue.Value())) {
    return nullptr;
  }
  return Unwrap(value.As<Napi::Object>())->queue_;
}

BatchQueueWrap::BatchQueueWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<BatchQueueWrap>(info) {
  guard(info.Env(), [&] {
    const int64_t capacity = toInteger(info[0], "queueDepth", 1);
    std::optional<int64_t> batchCount;
    if (!info[1].IsUndefined()) batchCount = toInteger(info[1], "batchesPerEpoch", 1);
    queue_ = std::make_shared<BatchQueue>(capacity, batchCount);
  });
}

Napi::Value BatchQueueWrap::Push(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    Batch batch{toTensorDict(info[0], "batch")};
    return Napi::Boolean::New(env, queue_->push(std::move(batch)));
  });
}

// Resolves true once the queue has room, false once the epoch no longer reads it.
Napi::Value BatchQueueWrap::WaitForRoom(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto deferred = std::make_shared<Napi::Promise::Deferred>(env);
  auto wake = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}),
                                            "firebrand.batchQueue", 0, 1);
  runTeardownFirst(env);
  queue_->whenRoom([wake, deferred, gate = napiGate(env)](bool open) mutable {
    gate->pass([&] {
      wake.BlockingCall(
          [deferred, open](Napi::Env env, Napi::Function) { deferred->Resolve(Napi::Boolean::New(env, open)); });
      wake.Release();
    });
  });
  return deferred->Promise();
}

void BatchQueueWrap::Finish(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { queue_->finish(); });
}

void BatchQueueWrap::Fail(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { queue_->fail(info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : ""); });
}

Napi::Value BatchQueueWrap::Closed(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), queue_->closed());
}

}  // namespace firebrand::binding
