// Runs a task on libuv's thread pool so the event loop stays free, and
// settles a promise with its result. The task returns a closure that builds
// the JS value on the JS thread (JS values cannot be made on the pool).
#pragma once
#include <napi.h>

#include <functional>
#include <optional>

#include "binding/js_errors.h"
#include "binding/promise_settlement.h"

namespace firebrand::binding {

class PromiseWorker : public Napi::AsyncWorker {
 public:
  using Finish = std::function<Napi::Value(Napi::Env)>;
  using Task = std::function<Finish()>;

  static Napi::Promise Start(Napi::Env env, Task task, PromiseSettlement::Settled settled = {});

 protected:
  void Execute() override;
  void OnOK() override;
  void OnError(const Napi::Error& error) override;

 private:
  PromiseWorker(Napi::Env env, Task task, PromiseSettlement::Settled settled);

  Task task_;
  Finish finish_;
  std::optional<CapturedError> error_;
  PromiseSettlement settlement_;
};

}  // namespace firebrand::binding
