#include "binding/epoch_worker.h"

#include "binding/results.h"

namespace firebrand::binding {

EpochWorker::EpochWorker(Napi::Env env, std::shared_ptr<TrainingEngine> engine, Run run, Napi::Function onReport,
                         PromiseSettlement::Settled settled)
    : Napi::AsyncProgressQueueWorker<StepReport>(env, "firebrand.trainEpoch"),
      engine_(std::move(engine)),
      run_(std::move(run)),
      onReport_(Napi::Persistent(onReport)),
      settlement_(env, std::move(settled)) {}

Napi::Promise EpochWorker::Start(Napi::Env env, std::shared_ptr<TrainingEngine> engine, Run run,
                                 Napi::Function onReport, PromiseSettlement::Settled settled) {
  auto* worker = new EpochWorker(env, std::move(engine), std::move(run), onReport, std::move(settled));
  const Napi::Promise promise = worker->settlement_.promise();
  worker->Queue();  // the worker deletes itself once settled
  return promise;
}

void EpochWorker::Execute(const ExecutionProgress& progress) {
  try {
    result_ = run_([&progress](const StepReport& report) { progress.Send(&report, 1); });
  } catch (...) {
    error_ = captureCurrentException();
    SetError(error_->message);
  }
}

void EpochWorker::OnProgress(const StepReport* reports, size_t count) {
  Napi::Env env = Env();
  Napi::HandleScope scope(env);
  for (size_t i = 0; i < count && callbackError_.IsEmpty(); ++i) {
    try {
      onReport_.Call({toJs(env, reports[i])});
    } catch (const Napi::Error& error) {
      callbackError_ = Napi::Persistent(error.Value());
      engine_->requestStop();
    }
  }
}

void EpochWorker::OnOK() {
  Napi::Env env = Env();
  if (!callbackError_.IsEmpty()) {
    settlement_.reject(callbackError_.Value());
    return;
  }
  settlement_.resolveWith(env, [&] { return toJs(env, result_); });
}

void EpochWorker::OnError(const Napi::Error&) {
  // A callback error came first: the training error is likely its consequence.
  if (!callbackError_.IsEmpty()) {
    settlement_.reject(callbackError_.Value());
    return;
  }
  settlement_.reject(toJsError(Env(), *error_).Value());
}

}  // namespace firebrand::binding
