// Runs long work (a training epoch, an evaluation) off the JS thread, started
// from libuv's thread pool. Its progress reports are queued from the working
// thread and handed to a JS callback on the JS thread; if that callback throws,
// the work is asked to stop (after its current step) and the promise rejects
// with the callback's error.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>
#include <optional>

#include "binding/js_errors.h"
#include "binding/promise_settlement.h"
#include "binding/results.h"

namespace firebrand::binding {

template <typename Result, typename Report>
class ReportingWorker : public Napi::AsyncProgressQueueWorker<Report> {
  using Base = Napi::AsyncProgressQueueWorker<Report>;

 public:
  using Sink = std::function<void(const Report&)>;
  using Run = std::function<Result(const Sink&)>;

  // `stop` asks the running work to end early (a callback failed).
  static Napi::Promise Start(Napi::Env env, Run run, Napi::Function onReport, std::function<void()> stop,
                             PromiseSettlement::Settled settled) {
    auto* worker = new ReportingWorker(env, std::move(run), onReport, std::move(stop), std::move(settled));
    const Napi::Promise promise = worker->settlement_.promise();
    worker->Queue();  // the worker deletes itself once settled
    return promise;
  }

 protected:
  void Execute(const typename Base::ExecutionProgress& progress) override {
    try {
      result_ = run_([&progress](const Report& report) { progress.Send(&report, 1); });
    } catch (...) {
      error_ = captureCurrentException();
      this->SetError(error_->message);
    }
  }

  void OnProgress(const Report* reports, size_t count) override {
    Napi::Env env = this->Env();
    Napi::HandleScope scope(env);
    for (size_t i = 0; i < count && callbackError_.IsEmpty(); ++i) {
      try {
        onReport_.Call({toJs(env, reports[i])});
      } catch (const Napi::Error& error) {
        callbackError_ = Napi::Persistent(error.Value());
        if (stop_) stop_();
      }
    }
  }

  void OnOK() override {
    Napi::Env env = this->Env();
    if (!callbackError_.IsEmpty()) {
      settlement_.reject(callbackError_.Value());
      return;
    }
    settlement_.resolveWith(env, [&] { return toJs(env, result_); });
  }

  void OnError(const Napi::Error&) override {
    // A callback error came first: the work's error is likely its consequence.
    if (!callbackError_.IsEmpty()) {
      settlement_.reject(callbackError_.Value());
      return;
    }
    settlement_.reject(toJsError(this->Env(), *error_).Value());
  }

 private:
  ReportingWorker(Napi::Env env, Run run, Napi::Function onReport, std::function<void()> stop,
                  PromiseSettlement::Settled settled)
      : Base(env, "firebrand.reportingWorker"),
        run_(std::move(run)),
        onReport_(Napi::Persistent(onReport)),
        stop_(std::move(stop)),
        settlement_(env, std::move(settled)) {}

  Run run_;
  Napi::FunctionReference onReport_;
  std::function<void()> stop_;
  Napi::ObjectReference callbackError_;
  Result result_;
  std::optional<CapturedError> error_;
  PromiseSettlement settlement_;
};

}  // namespace firebrand::binding
