#include "binding/engine_wrap.h"

#include "binding/batch_hook_call.h"
#include "binding/batch_queue_wrap.h"
#include "binding/config_convert.h"
#include "binding/convert.h"
#include "binding/dataset_wrap.h"
#include "binding/environment_teardown.h"
#include "binding/js_errors.h"
#include "binding/model_wrap.h"
#include "binding/results.h"
#include "binding/thread_task.h"
#include "core/distributed/distributed_options.h"
#include "core/errors.h"
#include "core/train/engine_factory.h"

namespace firebrand::binding {
void EngineWrap::Export(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(env, "NativeEngine",
                                   {InstanceMethod<&EngineWrap::TrainEpoch>("trainEpoch"),
                                    InstanceMethod<&EngineWrap::Evaluate>("evaluate"),
                                    InstanceMethod<&EngineWrap::Freeze>("freeze"),
                                    InstanceMethod<&EngineWrap::SaveAdapter>("saveAdapter"),
                                    InstanceMethod<&EngineWrap::LoadAdapter>("loadAdapter"),
                                    InstanceMethod<&EngineWrap::MergeAdapters>("mergeAdapters"),
                                    InstanceMethod<&EngineWrap::QuantizeInt8>("quantizeInt8"),
                                    InstanceMethod<&EngineWrap::CopyAverageToModel>("copyAverageToModel"),
                                    InstanceMethod<&EngineWrap::Unfreeze>("unfreeze"),
                                    InstanceMethod<&EngineWrap::BeginFit>("beginFit"),
                                    InstanceMethod<&EngineWrap::SaveState>("saveState"),
                                    InstanceMethod<&EngineWrap::LoadState>("loadState"),
                                    InstanceMethod<&EngineWrap::InitWeightsFrom>("initWeightsFrom"),
                                    InstanceMethod<&EngineWrap::SaveWeights>("saveWeights"),
                                    InstanceMethod<&EngineWrap::OnEvalMetric>("onEvalMetric"),
                                    InstanceAccessor<&EngineWrap::SchedulerMonitor>("schedulerMonitor"),
                                    InstanceMethod<&EngineWrap::RequestStop>("requestStop"),
                                    InstanceMethod<&EngineWrap::SetLearningRate>("setLearningRate"),
                                    InstanceAccessor<&EngineWrap::LearningRates>("learningRates"),
                                    InstanceAccessor<&EngineWrap::LearningRateNames>("learningRateNames"),
                                    InstanceMethod<&EngineWrap::ClearStop>("clearStop"),
                                    InstanceAccessor<&EngineWrap::LiveModel>("model"),
                                    InstanceAccessor<&EngineWrap::GlobalStep>("globalStep"),
                                    InstanceAccessor<&EngineWrap::Device>("device"),
                                    InstanceMethod<&EngineWrap::Distribute>("distribute"),
                                    InstanceMethod<&EngineWrap::SumOverRanks>("sumOverRanks"),
                                    InstanceMethod<&EngineWrap::PostFailure>("postFailure"),
                                    InstanceMethod<&EngineWrap::GatherOptimizerState>("gatherOptimizerState"),
                                    InstanceMethod<&EngineWrap::OptimizerStateBytes>("optimizerStateBytes")});
  exports.Set("NativeEngine", cls);
}

EngineWrap::EngineWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<EngineWrap>(info), thread_(std::make_shared<TaskThread>(napiGate(info.Env()))) {
  engine_ = guard(info.Env(), [&] { return makeEngine(toEngineSpec(info[0])); });
  if (engine_) engine_->setStepBoundary(thread_->stepBoundary());
}

std::function<void()> EngineWrap::claim(const char* operation) { return lock_.claim(Value(), operation, "trainer"); }

Napi::Value EngineWrap::startTask(Napi::Env env, PromiseWorker::Task task, const char* operation) {
  if (operation == kBetweenSteps)
    return startOnThread(env, *thread_, std::move(task), OperationLock::keepAlive(Value()), true);
  return startOnThread(env, *thread_, std::move(task), claim(operation));
}

// (data, segment, onReport, onBatch?) -> Promise<EpochResult>
Napi::Value EngineWrap::TrainEpoch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    using Worker = ThreadTask<EpochResult, StepReport>;
    const EpochSegment segment = toEpochSegment(info[1]);
    if (!info[2].IsFunction()) throw InvalidArgument("trainEpoch: onReport must be a function");
    const BatchHook batchHook = makeBatchHook(env, info[3], *thread_);
    auto engine = engine_;
    Worker::Run run;
    if (auto queue = BatchQueueWrap::From(info[0])) {
      run = [engine, queue, segment, batchHook](const ReportSink& report) {
        return engine->trainEpoch(*queue, segment, report, batchHook);
      };
    } else {
      const DatasetRef dataset = DatasetWrap::From(info[0], "train data");
      run = [engine, dataset, segment, batchHook](const ReportSink& report) {
        return engine->trainEpoch(dataset.data, *dataset.transforms, segment, report, batchHook);
      };
    }
    return Worker::Start(
        env, *thread_, std::move(run), info[2].As<Napi::Function>(), [engine] { engine->requestStop(); }, claim("fit"));
  });
}

// (data, batchSize, { epoch?, onReport?, onBatch? }) -> Promise<EvalResult>
Napi::Value EngineWrap::Evaluate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    using Worker = ThreadTask<EvalResult, EvalReport>;
    const Napi::Object options = info[2].IsObject() ? info[2].As<Napi::Object>() : Napi::Object::New(env);
    EvalCallbacks callbacks;
    callbacks.batchHook = makeBatchHook(env, options.Get("onBatch"), *thread_);
    if (!options.Get("epoch").IsUndefined()) callbacks.epoch = toInteger(options.Get("epoch"), "epoch", 0);
    if (!options.Get("distributed").IsUndefined()) callbacks.acrossRanks = options.Get("distributed").ToBoolean();
    const Napi::Value onReport = options.Get("onReport");
    const Napi::Function reportTo = onReport.IsFunction() ? onReport.As<Napi::Function>()
                                                          : Napi::Function::New(env, [](const Napi::CallbackInfo&) {});
    auto engine = engine_;
    Worker::Run run;
    if (auto queue = BatchQueueWrap::From(info[0])) {
      run = [engine, queue, callbacks](const EvalReportSink& report) {
        EvalCallbacks reporting = callbacks;
        reporting.report = report;
        return engine->evaluate(*queue, reporting);
      };
    } else {
      const DatasetRef dataset = DatasetWrap::From(info[0], "evaluation data");
      const int64_t batchSize = toInteger(info[1], "evalBatchSize", 1);
      run = [engine, dataset, batchSize, callbacks](const EvalReportSink& report) {
        EvalCallbacks reporting = callbacks;
        reporting.report = report;
        return engine->evaluate(dataset.data, *dataset.transforms, batchSize, reporting);
      };
    }
    return Worker::Start(env, *thread_, std::move(run), reportTo, {}, claim("evaluate"));
  });
}

// (lr, optimizerName?): applied now when idle or when the running fit waits for a per-batch hook
// (which may read learningRates next), else at the fit's next step.
void EngineWrap::SetLearningRate(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] {
    const std::string name = info[1].IsUndefined() ? "" : toString(info[1], "optimizer");
    engine_->learningRates().request(toNumber(info[0], "lr"), name);
    if (!lock_.busy()) {
      engine_->learningRates().applyRequested();
    } else {
      thread_->runWhileParked([this] { engine_->learningRates().applyRequested(); });
    }
  });
}

Napi::Value EngineWrap::LearningRateNames(const Napi::CallbackInfo& info) {
  // While an epoch runs, as of its latest report (unfreezing may add a group between steps).
  return toJs(info.Env(),
              lock_.running("fit") ? engine_->learningRates().publishedNames() : engine_->learningRates().names());
}

Napi::Value EngineWrap::LearningRates(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    // While an epoch runs, the rates it last reported (to a hook or a progress report).
    return toJs(env, lock_.running("fit") ? engine_->learningRates().published() : engine_->learningRates().current());
  });
}

Napi::Value EngineWrap::SaveAdapter(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const std::string path = toString(info[0], "path");
    return namesBetweenSteps(info, [path](TrainingEngine& engine) { return engine.fineTuning().saveAdapter(path); });
  });
}

Napi::Value EngineWrap::LoadAdapter(const Napi::CallbackInfo& info) {
  return pathTask(info, "path", kBetweenSteps,
                  [](TrainingEngine& engine, const std::string& path) { engine.fineTuning().loadAdapter(path); });
}

Napi::Value EngineWrap::MergeAdapters(const Napi::CallbackInfo& info) {
  return engineTask(info, "mergeAdapter", [](TrainingEngine& engine) { engine.fineTuning().mergeAdapters(); });
}

Napi::Value EngineWrap::QuantizeInt8(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const std::vector<std::string> roots = toStrings(info[0], "quantizeInt8: roots");
    return namesBetweenSteps(info, [roots](TrainingEngine& engine) { return engine.quantizeInt8(roots); });
  });
}

Napi::Value EngineWrap::CopyAverageToModel(const Napi::CallbackInfo& info) {
  return engineTask(info, "copyAverageToModel", [](TrainingEngine& engine) { engine.copyAverageToModel(); });
}

// Between steps during a fit (a callback's request), at once otherwise: the names `run` returns.
Napi::Value EngineWrap::namesBetweenSteps(const Napi::CallbackInfo& info,
                                          std::function<std::vector<std::string>(TrainingEngine&)> run) {
  auto engine = engine_;
  return startTask(
      info.Env(),
      [engine, run]() -> PromiseWorker::Finish {
        const auto names = run(*engine);
        return [names](Napi::Env env) -> Napi::Value { return toJs(env, names); };
      },
      kBetweenSteps);
}

Napi::Value EngineWrap::Freeze(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const std::vector<std::string> patterns = toStrings(info[0], "freeze: patterns");
    return namesBetweenSteps(info, [patterns](TrainingEngine& engine) { return engine.fineTuning().freeze(patterns); });
  });
}

Napi::Value EngineWrap::Unfreeze(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const std::vector<std::string> patterns = toStrings(info[0], "unfreeze: patterns");
    const std::optional<double> lr =
        info[1].IsUndefined() ? std::nullopt : std::optional<double>(toNumber(info[1], "unfreeze.lr"));
    return namesBetweenSteps(
        info, [patterns, lr](TrainingEngine& engine) { return engine.fineTuning().unfreeze(patterns, lr); });
  });
}

Napi::Value EngineWrap::BeginFit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    lock_.throwIfBusy("fit", "trainer");
    const FitOptions options = toFitOptions(info[1]);
    const int64_t numEpochs = toInteger(info[2], "numEpochs", 1);
    std::optional<int64_t> maxSteps;
    if (!info[3].IsUndefined()) maxSteps = toInteger(info[3], "maxSteps", 1);
    // A dataset, or a stream's batchesPerEpoch (undefined when it does not know).
    if (info[0].IsNumber() || info[0].IsUndefined()) {
      std::optional<int64_t> batchesPerEpoch;
      if (info[0].IsNumber()) batchesPerEpoch = toInteger(info[0], "batchesPerEpoch", 1);
      return toJs(env, engine_->beginFit(batchesPerEpoch, options, numEpochs, maxSteps));
    }
    return toJs(env, engine_->beginFit(*DatasetWrap::From(info[0], "train data").data, options, numEpochs, maxSteps));
  });
}

Napi::Value EngineWrap::engineTask(const Napi::CallbackInfo& info, const char* operation,
                                   void (*run)(TrainingEngine&)) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    auto engine = engine_;
    return startTask(
        env,
        [engine, run]() -> PromiseWorker::Finish {
          run(*engine);
          return [](Napi::Env env) -> Napi::Value { return env.Undefined(); };
        },
        operation);
  });
}

Napi::Value EngineWrap::pathTask(const Napi::CallbackInfo& info, const char* field, const char* operation,
                                 void (*run)(TrainingEngine&, const std::string&)) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], field);
    auto engine = engine_;
    return startTask(
        env,
        [engine, path, run]() -> PromiseWorker::Finish {
          run(*engine, path);
          return [](Napi::Env env) -> Napi::Value { return env.Undefined(); };
        },
        operation);
  });
}

Napi::Value EngineWrap::SaveState(const Napi::CallbackInfo& info) {
  return pathTask(info, "folder", "saveCheckpoint",
                  [](TrainingEngine& engine, const std::string& path) { engine.saveState(path); });
}

Napi::Value EngineWrap::SaveWeights(const Napi::CallbackInfo& info) {
  return pathTask(info, "path", kBetweenSteps,
                  [](TrainingEngine& engine, const std::string& path) { engine.saveWeights(path); });
}

Napi::Value EngineWrap::LoadState(const Napi::CallbackInfo& info) {
  return pathTask(info, "folder", "loadCheckpoint",
                  [](TrainingEngine& engine, const std::string& path) { engine.loadState(path); });
}

// (path, strict) -> Promise<{ missing: string[], unexpected: string[] }>
Napi::Value EngineWrap::InitWeightsFrom(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], "path");
    const bool strict = toBoolean(info[1], "strict");
    // { source name: new name, or null to leave the weight out }
    std::map<std::string, std::optional<std::string>> renames;
    if (!info[2].IsUndefined()) {
      const Napi::Object table = toObject(info[2], "initWeightsFrom.map");
      const Napi::Array names = table.GetPropertyNames();
      for (uint32_t i = 0; i < names.Length(); ++i) {
        const std::string name = names.Get(i).As<Napi::String>().Utf8Value();
        const Napi::Value target = table.Get(name);
        renames[name] = target.IsNull()
                            ? std::nullopt
                            : std::optional<std::string>(toString(target, "initWeightsFrom.map['" + name + "']"));
      }
    }
    auto engine = engine_;
    return startTask(
        env,
        [engine, path, strict, renames]() -> PromiseWorker::Finish {
          const WeightsReport report = engine->initWeightsFrom(path, strict, renames);
          return [report](Napi::Env env) -> Napi::Value { return toJs(env, report); };
        },
        kBetweenSteps);
  });
}

void EngineWrap::OnEvalMetric(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { engine_->onEvalMetric(toNumber(info[0], "metric")); });
}

Napi::Value EngineWrap::SchedulerMonitor(const Napi::CallbackInfo& info) {
  const std::string monitor = engine_->schedulerMonitor();
  return monitor.empty() ? info.Env().Undefined() : Napi::String::New(info.Env(), monitor);
}

void EngineWrap::RequestStop(const Napi::CallbackInfo&) { engine_->requestStop(); }

void EngineWrap::ClearStop(const Napi::CallbackInfo&) { engine_->clearStop(); }

Napi::Value EngineWrap::LiveModel(const Napi::CallbackInfo& info) {
  return ModelWrap::Over(info.Env(), {engine_->sharedModel(), engine_->device(), engine_->autocastDtype(), thread_,
                                      /*ofTrainer=*/true});
}

Napi::Value EngineWrap::GlobalStep(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(engine_->globalStep()));
}

Napi::Value EngineWrap::Device(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), engine_->device().str());
}

// ({ rank, worldSize, masterAddr, masterPort, backend?, timeout?, bucketCapMb?, broadcastBuffers?,
//    zeroRedundancyOptimizer? })
//   -> Promise<{ rank, worldSize, backend, buckets }>, once every rank has joined.
Napi::Value EngineWrap::Distribute(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const DistributedOptions options = toDistributedOptions(info[0]);
    auto engine = engine_;
    return startTask(
        env,
        [engine, options]() -> PromiseWorker::Finish {
          engine->distribute(options);
          const RankReducer& parallel = engine->ranks();
          return [rank = parallel.rank(), worldSize = parallel.worldSize(), backend = parallel.backendName(),
                  buckets = parallel.bucketCount()](Napi::Env env) -> Napi::Value {
            auto joined = Napi::Object::New(env);
            joined.Set("rank", Napi::Number::New(env, static_cast<double>(rank)));
            joined.Set("worldSize", Napi::Number::New(env, static_cast<double>(worldSize)));
            joined.Set("backend", Napi::String::New(env, backend));
            joined.Set("buckets", Napi::Number::New(env, static_cast<double>(buckets)));
            return joined;
          };
        },
        "distribute");
  });
}

// (values, what) -> Promise<number[]>: each value summed over the ranks.
Napi::Value EngineWrap::SumOverRanks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::vector<double> values = toNumbers(info[0], "values");
    const std::string what = toString(info[1], "what");
    if (!engine_->distributed()) throw InvalidState("sumOverRanks: this trainer is not part of a distributed run");
    auto engine = engine_;
    return startTask(
        env,
        [engine, values, what]() -> PromiseWorker::Finish {
          const std::vector<double> sums = engine->ranks().sumOverRanks(values, what);
          return [sums](Napi::Env env) -> Napi::Value { return toJs(env, sums); };
        },
        "sumOverRanks");
  });
}

// (message) -> Promise<void>: tells the other ranks that this one failed, off the main thread (the store is
// a network round trip).
Napi::Value EngineWrap::PostFailure(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string message = toString(info[0], "message");
    auto engine = engine_;
    return startTask(
        env,
        [engine, message]() -> PromiseWorker::Finish {
          engine->ranks().postFailure(message);
          return [](Napi::Env env) -> Napi::Value { return env.Undefined(); };
        },
        "postFailure");
  });
}

// () -> Promise<void>: with the optimizer state sharded, every rank's share sent to rank 0 before it saves.
Napi::Value EngineWrap::GatherOptimizerState(const Napi::CallbackInfo& info) {
  return engineTask(info, "saveCheckpoint", [](TrainingEngine& engine) { engine.gatherOptimizerState(); });
}

// () -> Promise<number>: the bytes of optimizer state this process holds.
Napi::Value EngineWrap::OptimizerStateBytes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    auto engine = engine_;
    return startTask(
        env,
        [engine]() -> PromiseWorker::Finish {
          const double bytes = static_cast<double>(engine->optimizerStateBytes());
          return [bytes](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, bytes); };
        },
        kBetweenSteps);
  });
}

}  // namespace firebrand::binding
