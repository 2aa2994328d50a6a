#include "binding/promise_worker.h"

#include "core/runtime/runtime_info.h"

namespace firebrand::binding {

PromiseWorker::PromiseWorker(Napi::Env env, Task task, PromiseSettlement::Settled settled)
    : Napi::AsyncWorker(env, "firebrand"), task_(std::move(task)), settlement_(env, std::move(settled)) {}

Napi::Promise PromiseWorker::Start(Napi::Env env, Task task, PromiseSettlement::Settled settled) {
  auto* worker = new PromiseWorker(env, std::move(task), std::move(settled));
  const Napi::Promise promise = worker->settlement_.promise();
  worker->Queue();  // the worker deletes itself once settled
  return promise;
}

void PromiseWorker::Execute() {
  // As PyTorch's DataLoader workers: one kernel thread on libuv's pool, whose threads would otherwise each
  // keep kernel threads of their own beside training's (runtime_info.h), and the same rounding whatever
  // the thread count.
  limitKernelThreadsOfThisThread();
  try {
    finish_ = task_();
  } catch (...) {
    error_ = captureCurrentException();
    SetError(error_->message);
  }
}

void PromiseWorker::OnOK() {
  Napi::Env env = Env();
  settlement_.resolveWith(env, [&] { return finish_(env); });
}

void PromiseWorker::OnError(const Napi::Error&) { settlement_.reject(toJsError(Env(), *error_).Value()); }

}  // namespace firebrand::binding
