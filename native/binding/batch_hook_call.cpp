#include "binding/batch_hook_call.h"

#include <atomic>
#include <future>
#include <memory>

#include "binding/results.h"
#include "core/errors.h"

namespace firebrand::binding {
namespace {

// One call's hand-off between the threads; done() may come at most once.
struct PendingCall {
  BatchEvent event;
  std::promise<bool> finished;
  std::atomic<bool> settled{false};

  void settle(bool ok) {
    if (!settled.exchange(true)) finished.set_value(ok);
  }
};

// Owns the thread-safe function; released when the last copy of the hook goes.
class JsBatchHook {
 public:
  JsBatchHook(Napi::Env env, Napi::Function onBatch)
      : function_(Napi::ThreadSafeFunction::New(env, onBatch, "firebrand.batchHook", 0, 1)) {
    // The epoch's promise keeps Node alive; this need not.
    function_.Unref(env);
  }
  ~JsBatchHook() { function_.Release(); }
  JsBatchHook(const JsBatchHook&) = delete;
  JsBatchHook& operator=(const JsBatchHook&) = delete;

  void call(const BatchEvent& event) {
    auto pending = std::make_shared<PendingCall>();
    pending->event = event;
    std::future<bool> finished = pending->finished.get_future();
    const napi_status status = function_.BlockingCall(
        [pending](Napi::Env env, Napi::Function onBatch) {
          const auto done = Napi::Function::New(env, [pending](const Napi::CallbackInfo& info) {
            pending->settle(info.Length() == 0 || info[0].ToBoolean().Value());
          });
          try {
            onBatch.Call({toJs(env, pending->event), done});
          } catch (const Napi::Error&) {
            pending->settle(false);
          }
        });
    if (status != napi_ok) throw InvalidState("per-batch callbacks: Node is shutting down");
    if (!finished.get()) {
      throw Error("ERR_FIREBRAND_CALLBACK", "a per-batch callback failed (its error is reported by the trainer)");
    }
  }

 private:
  Napi::ThreadSafeFunction function_;
};

}  // namespace

BatchHook makeBatchHook(Napi::Env env, const Napi::Value& onBatch) {
  if (onBatch.IsUndefined()) return {};
  if (!onBatch.IsFunction()) throw InvalidArgument("onBatch must be a function or undefined");
  auto hook = std::make_shared<JsBatchHook>(env, onBatch.As<Napi::Function>());
  return [hook](const BatchEvent& event) { hook->call(event); };
}

}  // namespace firebrand::binding
