// JS handle of a TrainingEngine. Long work (epochs, evaluation,
// checkpoints) runs on the trainer's own thread (thread_task.h); one at a
// time, since they share the model.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>

#include "binding/operation_lock.h"
#include "binding/promise_worker.h"
#include "binding/task_thread.h"
#include "core/train/training_engine.h"

namespace firebrand::binding {

class EngineWrap : public Napi::ObjectWrap<EngineWrap> {
 public:
  static void Export(Napi::Env env, Napi::Object exports);
  explicit EngineWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value TrainEpoch(const Napi::CallbackInfo& info);
  Napi::Value Evaluate(const Napi::CallbackInfo& info);
  // (patterns) / (patterns, lr?) -> Promise<string[]>: the names frozen or unfrozen, between steps during a fit.
  Napi::Value Freeze(const Napi::CallbackInfo& info);
  // () -> Promise<void>: the model takes config.ema's averaged weights (the end of a fit).
  Napi::Value CopyAverageToModel(const Napi::CallbackInfo& info);
  // LoRA adapters: (path) -> Promise<void> to write or read them (PEFT's names), () -> Promise<void> to merge.
  Napi::Value SaveAdapter(const Napi::CallbackInfo& info);
  Napi::Value LoadAdapter(const Napi::CallbackInfo& info);
  Napi::Value MergeAdapters(const Napi::CallbackInfo& info);
  Napi::Value QuantizeInt8(const Napi::CallbackInfo& info);
  Napi::Value Unfreeze(const Napi::CallbackInfo& info);
  Napi::Value BeginFit(const Napi::CallbackInfo& info);
  Napi::Value SaveState(const Napi::CallbackInfo& info);
  Napi::Value LoadState(const Napi::CallbackInfo& info);
  Napi::Value InitWeightsFrom(const Napi::CallbackInfo& info);
  Napi::Value SaveWeights(const Napi::CallbackInfo& info);
  void OnEvalMetric(const Napi::CallbackInfo& info);
  Napi::Value SchedulerMonitor(const Napi::CallbackInfo& info);
  void RequestStop(const Napi::CallbackInfo& info);
  void SetLearningRate(const Napi::CallbackInfo& info);
  Napi::Value LearningRates(const Napi::CallbackInfo& info);
  Napi::Value LearningRateNames(const Napi::CallbackInfo& info);
  void ClearStop(const Napi::CallbackInfo& info);
  // A NativeModel over this trainer's model, on this trainer's thread (model_wrap.h): predictions,
  // generation, exports and the state dict, between two steps during a fit.
  Napi::Value LiveModel(const Napi::CallbackInfo& info);
  Napi::Value GlobalStep(const Napi::CallbackInfo& info);
  Napi::Value Device(const Napi::CallbackInfo& info);
  Napi::Value Distribute(const Napi::CallbackInfo& info);
  Napi::Value SumOverRanks(const Napi::CallbackInfo& info);
  Napi::Value PostFailure(const Napi::CallbackInfo& info);
  Napi::Value GatherOptimizerState(const Napi::CallbackInfo& info);
  Napi::Value OptimizerStateBytes(const Napi::CallbackInfo& info);

  // Marks the engine busy until the returned hook runs; throws if it already is.
  std::function<void()> claim(const char* operation);
  // The operation of a task that claims nothing: it may come while another runs (a fit), and then
  // runs between two of its steps, or while it waits for a per-batch hook (which may await it).
  // Reads of the model, and changes that the engine checks are made at a step boundary.
  static constexpr const char* kBetweenSteps = nullptr;
  // Starts `task` on this trainer's thread once `operation` can claim the engine (or between steps);
  // its result settles the promise.
  Napi::Value startTask(Napi::Env env, PromiseWorker::Task task, const char* operation);
  // A task that only runs `run` on the engine, claiming `operation`.
  Napi::Value engineTask(const Napi::CallbackInfo& info, const char* operation, void (*run)(TrainingEngine&));
  Napi::Value namesBetweenSteps(const Napi::CallbackInfo& info,
                                std::function<std::vector<std::string>(TrainingEngine&)> run);
  // Runs `run(engine, path)` on this trainer's thread as startTask does, path read from the first argument as `field`.
  Napi::Value pathTask(const Napi::CallbackInfo& info, const char* field, const char* operation,
                       void (*run)(TrainingEngine&, const std::string&));

  std::shared_ptr<TrainingEngine> engine_;
  std::shared_ptr<TaskThread> thread_;  // runs this trainer's tasks, and its live model's
  OperationLock lock_;
};

}  // namespace firebrand::binding
