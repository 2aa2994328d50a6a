#include "binding/model_wrap.h"

#include <utility>

#include "binding/addon_data.h"
#include "binding/convert.h"
#include "binding/environment_teardown.h"
#include "binding/generation_convert.h"
#include "binding/js_errors.h"
#include "binding/onnx_convert.h"
#include "binding/results.h"
#include "binding/thread_task.h"
#include "core/errors.h"
#include "core/inference/model_exports.h"
#include "core/inference/prediction.h"
#include "core/model/graph_model.h"
#include "core/model/model_source.h"
#include "core/model/weights.h"
#include "core/runtime/cpu_memory_cache.h"
#include "core/runtime/device.h"
#include "core/runtime/runtime_info.h"

namespace firebrand::binding {

void ModelWrap::Export(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(
      env, "NativeModel",
      {InstanceMethod<&ModelWrap::Predict>("predict"), InstanceMethod<&ModelWrap::StartGeneration>("startGeneration"),
       InstanceMethod<&ModelWrap::GenerateNext>("generateNext"), InstanceMethod<&ModelWrap::LoadWeights>("loadWeights"),
       InstanceMethod<&ModelWrap::ExportOnnx>("exportOnnx"),
       InstanceMethod<&ModelWrap::ExportTorchScript>("exportTorchScript"),
       InstanceMethod<&ModelWrap::StateDict>("stateDict"), InstanceAccessor<&ModelWrap::Description>("description"),
       InstanceAccessor<&ModelWrap::ParameterCount>("parameterCount"), InstanceAccessor<&ModelWrap::Device>("device"),
       StaticMethod<&ModelWrap::Describe>("describe"), StaticMethod<&ModelWrap::Summary>("summary")});
  addonData(env).model = Napi::Persistent(cls);
  exports.Set("NativeModel", cls);
}

ModelWrap::ModelWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ModelWrap>(info) {
  if (info[0].IsExternal()) {
    place_ = *info[0].As<Napi::External<ModelPlace>>().Data();
    return;
  }
  place_.thread = std::make_shared<TaskThread>(napiGate(info.Env()));
  guard(info.Env(), [&] {
    place_.device = parseDevice(toString(info[1], "device"));
    place_.model = buildModel(toModelSource(info[0]));
    place_.model->moveTo(place_.device);
  });
}

Napi::Object ModelWrap::Over(Napi::Env env, const ModelPlace& place) {
  ModelPlace held = place;
  return addonData(env).model.New({Napi::External<ModelPlace>::New(env, &held)});
}

Napi::Value ModelWrap::Describe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value { return describeModel(env, *buildModelLeavingRng(toModelSource(info[0]))); });
}

// (graph model spec, inputShape, dtype) -> describe()'s object and nodeShapes: (number[] | null)[],
// each node's output shape for zeros of that shape, in eval mode, the seeded random numbers untouched.
Napi::Value ModelWrap::Summary(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const at::Tensor input = emptyTensor(toString(info[2], "dtype"), toShape(info[1], "inputShape"), "dtype");
    auto model = std::dynamic_pointer_cast<GraphModel>(buildModelLeavingRng(toModelSource(info[0])));
    if (!model) throw InvalidArgument("summary: the model is not written as TypeScript modules");
    const auto shapes = model->nodeShapes(input);
    auto nodeShapes = Napi::Array::New(env, shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i)
      nodeShapes.Set(i, shapes[i] ? Napi::Value(fromShape(env, *shapes[i])) : env.Null());
    Napi::Object result = describeModel(env, *model);
    result.Set("nodeShapes", nodeShapes);
    return result;
  });
}

// Posted between steps: on a trainer's thread during a fit it runs between two training steps (or while
// the fit waits for a per-batch hook, which may await it); on a model's own thread that is simply in order.
Napi::Value ModelWrap::startTask(Napi::Env env, PromiseWorker::Task task) {
  return startOnThread(env, *place_.thread, std::move(task), OperationLock::keepAlive(Value()), true);
}

Napi::Value ModelWrap::Predict(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    // The inputs' copy is made and freed while the memory cache is open, so the model keeps its block for
    // the next call's copy: 64 images of 224x224 are 38 MB, faulted in page by page when fresh.
    PredictionInputs inputs = [&] {
      const CpuMemoryCache::Scope inputsBlock;
      return toPredictionInputs(info[0], info[1]);
    }();
    PredictionOptions options{place_.device, place_.autocastDtype, toInteger(info[2], "batchSize", 1),
                              toBoolean(info[3], "optimizeForInference")};
    return startTask(env,
                     [model = place_.model, inputs = std::move(inputs), options]() mutable -> PromiseWorker::Finish {
                       useRequestedThreads();
                       const CpuMemoryCache::Scope inputsBlock;
                       const PredictionInputs given = std::exchange(inputs, PredictionInputs{});
                       std::vector<at::Tensor> outputs =
                           std::visit([&](const auto& each) { return predictInBatches(*model, each, options); }, given);
                       return [outputs, layout = model->outputLayout()](Napi::Env env) -> Napi::Value {
                         return fromOutputs(env, layout, outputs);
                       };
                     });
  });
}

Napi::Value ModelWrap::ExportOnnx(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const TensorDict example = toTensorDict(info[0], "example");
    const OnnxExportOptions options = toOnnxExportOptions(info[1]);
    return startTask(env, [model = place_.model, example, options]() -> PromiseWorker::Finish {
      auto graph = std::make_shared<OnnxGraph>(exportOnnx(*model, example, options));
      return [graph](Napi::Env env) -> Napi::Value { return fromOnnxGraph(env, *graph); };
    });
  });
}

Napi::Value ModelWrap::ExportTorchScript(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], "path");
    return startTask(env, [model = place_.model, path]() -> PromiseWorker::Finish {
      exportTorchScript(*model, path);
      return [](Napi::Env env) -> Napi::Value { return env.Undefined(); };
    });
  });
}

Napi::Value ModelWrap::StateDict(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    return startTask(info.Env(), [model = place_.model]() -> PromiseWorker::Finish {
      auto state = stateDictCopy(*model);
      return [state](Napi::Env env) -> Napi::Value {
        auto object = Napi::Object::New(env);
        for (const auto& [name, tensor] : state) object.Set(name, fromTensor(env, tensor));
        return object;
      };
    });
  });
}

Napi::Value ModelWrap::StartGeneration(const Napi::CallbackInfo& info) {
  return startGeneration(info, place_.model, place_.device);
}

Napi::Value ModelWrap::GenerateNext(const Napi::CallbackInfo& info) {
  return nextToken(info, *place_.thread, OperationLock::keepAlive(Value()), /*betweenSteps=*/true);
}

// (path, strict) -> Promise<{ missing, unexpected }>: Model.load's weights.
Napi::Value ModelWrap::LoadWeights(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    if (place_.ofTrainer) throw InvalidState("loadWeights: this is a trainer's model; use trainer.initWeightsFrom");
    const std::string path = toString(info[0], "path");
    const bool strict = toBoolean(info[1], "strict");
    return startOnThread(
        env, *place_.thread,
        [model = place_.model, path, strict]() -> PromiseWorker::Finish {
          const WeightsReport report = loadWeights(*model, *openWeightsFile(path), strict, path);
          return [report](Napi::Env env) -> Napi::Value { return toJs(env, report); };
        },
        lock_.claim(Value(), "loadWeights", "model"));
  });
}

Napi::Value ModelWrap::Description(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value { return describeModel(info.Env(), *place_.model); });
}

Napi::Value ModelWrap::ParameterCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(place_.model->parameterCount()));
}

Napi::Value ModelWrap::Device(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), place_.device.str());
}

}  // namespace firebrand::binding
