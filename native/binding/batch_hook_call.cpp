#include "binding/batch_hook_call.h"

#include <memory>

#include "binding/environment_teardown.h"
#include "binding/results.h"
#include "core/errors.h"

namespace firebrand::binding {
namespace {

// Owns the thread-safe function; released when the last copy of the hook goes.
class JsBatchHook {
 public:
  JsBatchHook(Napi::Env env, Napi::Function onBatch, TaskThread& thread)
      : function_(Napi::ThreadSafeFunction::New(env, onBatch, "firebrand.batchHook", 0, 1)),
        hookWaits_(thread.hookWaits()),
        gate_(thread.gate()) {
    runTeardownFirst(env);
    // The epoch's promise keeps Node alive; this need not.
    function_.Unref(env);
  }
  ~JsBatchHook() {
    gate_->pass([&] { function_.Release(); });
  }
  JsBatchHook(const JsBatchHook&) = delete;
  JsBatchHook& operator=(const JsBatchHook&) = delete;

  // On the task thread. A hook that awaits a between-steps task (a prediction, unfreeze) gets it
  // run while this waits: the task thread is the one that runs it.
  void call(const BatchEvent& event) {
    const std::shared_ptr<TaskThread::HookWait> wait = hookWaits_();
    napi_status status = napi_closing;
    gate_->pass([&] {
      status = function_.BlockingCall([wait, event](Napi::Env env, Napi::Function onBatch) {
        const auto done = Napi::Function::New(env, [wait](const Napi::CallbackInfo& info) {
          wait->finish(info.Length() == 0 || info[0].ToBoolean().Value());
        });
        try {
          onBatch.Call({toJs(env, event), done});
        } catch (const Napi::Error&) {
          wait->finish(false);
        }
      });
    });
    if (status != napi_ok) {
      wait->finish(false);
      wait->wait();
      throw InvalidState("per-batch callbacks: Node is shutting down");
    }
    if (!wait->wait()) {
      throw Error("ERR_FIREBRAND_CALLBACK", "a per-batch callback failed (its error is reported by the trainer)");
    }
  }

 private:
  Napi::ThreadSafeFunction function_;
  std::function<std::shared_ptr<TaskThread::HookWait>()> hookWaits_;
  std::shared_ptr<NapiGate> gate_;
};

}  // namespace

BatchHook makeBatchHook(Napi::Env env, const Napi::Value& onBatch, TaskThread& thread) {
  if (onBatch.IsUndefined()) return {};
  if (!onBatch.IsFunction()) throw InvalidArgument("onBatch must be a function or undefined");
  auto hook = std::make_shared<JsBatchHook>(env, onBatch.As<Napi::Function>(), thread);
  return [hook](const BatchEvent& event) { hook->call(event); };
}

}  // namespace firebrand::binding
