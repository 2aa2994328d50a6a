#include "binding/promise_worker.h"

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
