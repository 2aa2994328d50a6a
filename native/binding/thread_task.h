// Runs a task on a TaskThread (a trainer's or a model's) and settles a
// promise on the JS thread, handing its progress reports to a JS callback on
// the way. Nothing
// waits for it: not the JS thread, not a libuv pool thread (four running fits
// would otherwise hold the whole pool, and the process's fs, dns and crypto
// work with it). If the report callback throws, the task is asked to stop
// (after its current step) and the promise rejects with the callback's error.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

#include "binding/environment_teardown.h"
#include "binding/js_errors.h"
#include "binding/promise_settlement.h"
#include "binding/promise_worker.h"
#include "binding/results.h"
#include "binding/task_thread.h"

namespace firebrand::binding {

// The Report of a task that sends none.
struct NoReport {};

template <typename Result, typename Report = NoReport>
class ThreadTask {
 public:
  using Sink = std::function<void(const Report&)>;
  using Run = std::function<Result(const Sink&)>;

  // `onReport` gets each report (absent: the task sends none); `stop` asks the
  // running task to end early; `settled` runs once the promise is settled.
  // `betweenSteps`: the thread's running task may run it at a step boundary (TaskThread::postBetweenSteps).
  static Napi::Promise Start(Napi::Env env, TaskThread& thread, Run run, std::optional<Napi::Function> onReport,
                             std::function<void()> stop, PromiseSettlement::Settled settled,
                             bool betweenSteps = false) {
    // Owned by the JS thread's last callback, which deletes it: its JS handles must die there.
    auto* task = new ThreadTask(env, std::move(stop), std::move(settled), thread.gate());
    const Napi::Promise promise = task->settlement_.promise();
    task->channel_ =
        Napi::ThreadSafeFunction::New(env, onReport ? *onReport : Napi::Function(), "firebrand.task", 0, 1);
    runTeardownFirst(env);
    auto work = [task, run = std::move(run)] { task->runOnThread(run); };
    if (betweenSteps) {
      thread.postBetweenSteps(std::move(work));
    } else {
      thread.post(std::move(work), task->stop_);
    }
    return promise;
  }

 private:
  struct Outcome {
    std::optional<Result> result;
    std::optional<CapturedError> error;
  };

  ThreadTask(Napi::Env env, std::function<void()> stop, PromiseSettlement::Settled settled,
             std::shared_ptr<NapiGate> gate)
      : stop_(std::move(stop)), settlement_(env, std::move(settled)), gate_(std::move(gate)) {}

  // On the task thread.
  void runOnThread(const Run& run) {
    auto* outcome = new Outcome();
    try {
      outcome->result = run([this](const Report& report) { send(report); });
    } catch (...) {
      outcome->error = captureCurrentException();
    }
    // Once the call is queued the JS thread may settle and delete this at any moment.
    const Napi::ThreadSafeFunction channel = channel_;
    const std::shared_ptr<NapiGate> gate = gate_;
    napi_status status = napi_closing;
    gate->pass([&] {
      status = channel.BlockingCall(outcome, [this](Napi::Env env, Napi::Function, Outcome* done) {
        std::unique_ptr<Outcome> owned(done);
        if (env == nullptr) return;  // the environment is shutting down
        settle(env, *owned);
        delete this;
      });
      channel.Release();
    });
    if (status != napi_ok) delete outcome;  // shutting down: nobody waits for it
  }

  // On the task thread.
  void send(const Report& report) {
    auto* copy = new Report(report);
    napi_status status = napi_closing;
    gate_->pass([&] {
      status = channel_.BlockingCall(copy, [this](Napi::Env env, Napi::Function onReport, Report* sent) {
        std::unique_ptr<Report> owned(sent);
        if (env != nullptr) deliver(env, onReport, *owned);
      });
    });
    if (status != napi_ok) delete copy;
  }

  void deliver(Napi::Env env, Napi::Function onReport, const Report& report) {
    if constexpr (!std::is_same_v<Report, NoReport>) {
      if (!callbackError_.IsEmpty()) return;
      Napi::HandleScope scope(env);
      try {
        onReport.Call({toJs(env, report)});
      } catch (const Napi::Error& error) {
        callbackError_ = Napi::Persistent(error.Value());
        if (stop_) stop_();
      }
    }
  }

  void settle(Napi::Env env, const Outcome& outcome) {
    Napi::HandleScope scope(env);
    // A callback error came first: the task's own error is likely its consequence.
    if (!callbackError_.IsEmpty()) {
      settlement_.reject(callbackError_.Value());
    } else if (outcome.error) {
      settlement_.reject(toJsError(env, *outcome.error).Value());
    } else {
      settlement_.resolveWith(env, [&] { return valueOf(env, *outcome.result); });
    }
  }

  static Napi::Value valueOf(Napi::Env env, const Result& result) {
    if constexpr (std::is_same_v<Result, PromiseWorker::Finish>) {
      return result(env);
    } else {
      return toJs(env, result);
    }
  }

  Napi::ThreadSafeFunction channel_;
  std::function<void()> stop_;
  Napi::ObjectReference callbackError_;
  PromiseSettlement settlement_;
  std::shared_ptr<NapiGate> gate_;
};

// A task without reports on `thread`, settling the returned promise with what it returns.
inline Napi::Promise startOnThread(Napi::Env env, TaskThread& thread, PromiseWorker::Task task,
                                   PromiseSettlement::Settled settled, bool betweenSteps = false) {
  return ThreadTask<PromiseWorker::Finish>::Start(
      env, thread, [task = std::move(task)](const auto&) { return task(); }, std::nullopt, {}, std::move(settled),
      betweenSteps);
}

}  // namespace firebrand::binding
