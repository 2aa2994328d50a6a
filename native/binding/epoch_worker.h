// Runs one training epoch on libuv's thread pool. Step reports are queued
// from the training thread and handed to a JS callback on the JS thread; if
// that callback throws, the epoch stops after its current step and the
// promise rejects with the callback's error.
#pragma once
#include <napi.h>

#include <memory>
#include <optional>

#include "binding/js_errors.h"
#include "binding/promise_settlement.h"
#include "core/train/training_engine.h"

namespace firebrand::binding {

class EpochWorker : public Napi::AsyncProgressQueueWorker<StepReport> {
 public:
  // Trains the epoch on the pool thread (engine->trainEpoch over a dataset or a stream).
  using Run = std::function<EpochResult(const ReportSink&)>;

  static Napi::Promise Start(Napi::Env env, std::shared_ptr<TrainingEngine> engine, Run run,
                             Napi::Function onReport, PromiseSettlement::Settled settled);

 protected:
  void Execute(const ExecutionProgress& progress) override;
  void OnProgress(const StepReport* reports, size_t count) override;
  void OnOK() override;
  void OnError(const Napi::Error& error) override;

 private:
  EpochWorker(Napi::Env env, std::shared_ptr<TrainingEngine> engine, Run run, Napi::Function onReport,
              PromiseSettlement::Settled settled);

  std::shared_ptr<TrainingEngine> engine_;
  Run run_;
  Napi::FunctionReference onReport_;
  Napi::ObjectReference callbackError_;
  EpochResult result_;
  std::optional<CapturedError> error_;
  PromiseSettlement settlement_;
};

}  // namespace firebrand::binding
