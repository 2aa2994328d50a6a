#include "binding/model_wrap.h"

#include "binding/convert.h"
#include "binding/environment_teardown.h"
#include "binding/generation_convert.h"
#include "binding/js_errors.h"
#include "binding/onnx_convert.h"
#include "binding/results.h"
#include "binding/thread_task.h"
#include "core/errors.h"
#include "core/inference/prediction.h"
#include "core/model/graph_model.h"
#include "core/model/model_source.h"
#include "core/model/weights.h"
#include "core/runtime/device.h"
#include "core/runtime/runtime_info.h"

namespace firebrand::binding {

void ModelWrap::Export(Napi::Env env, Napi::Object exports) {
  Napi::Function cls = DefineClass(
      env, "NativeModel",
      {InstanceMethod<&ModelWrap::Predict>("predict"), InstanceMethod<&ModelWrap::StartGeneration>("startGeneration"),
       InstanceMethod<&ModelWrap::GenerateNext>("generateNext"), InstanceMethod<&ModelWrap::LoadWeights>("loadWeights"),
       InstanceMethod<&ModelWrap::ExportOnnx>("exportOnnx"),
       InstanceAccessor<&ModelWrap::ParameterCount>("parameterCount"), InstanceAccessor<&ModelWrap::Device>("device"),
       StaticMethod<&ModelWrap::Describe>("describe"), StaticMethod<&ModelWrap::Summary>("summary")});
  exports.Set("NativeModel", cls);
}

ModelWrap::ModelWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<ModelWrap>(info), thread_(napiGate(info.Env())) {
  guard(info.Env(), [&] {
    device_ = parseDevice(toString(info[1], "device"));
    model_ = buildModel(toModelSource(info[0]));
    model_->moveTo(device_);
  });
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

Napi::Value ModelWrap::Predict(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    PredictionInputs inputs = toPredictionInputs(info[0], info[1]);
    PredictionOptions options{device_, std::nullopt, toInteger(info[2], "batchSize", 1)};
    auto model = model_;
    return startOnThread(
        env, thread_,
        [model, inputs, options]() -> PromiseWorker::Finish {
          useRequestedThreads();
          std::vector<at::Tensor> outputs =
              std::visit([&](const auto& given) { return predictInBatches(*model, given, options); }, inputs);
          return [outputs, layout = model->outputLayout()](Napi::Env env) -> Napi::Value {
            return fromOutputs(env, layout, outputs);
          };
        },
        OperationLock::keepAlive(Value()));
  });
}

Napi::Value ModelWrap::ExportOnnx(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const TensorDict example = toTensorDict(info[0], "example");
    const OnnxExportOptions options = toOnnxExportOptions(info[1]);
    auto model = model_;
    return startOnThread(
        env, thread_,
        [model, example, options]() -> PromiseWorker::Finish {
          auto graph = std::make_shared<OnnxGraph>(model->onnxGraph(example, options));
          return [graph](Napi::Env env) -> Napi::Value { return fromOnnxGraph(env, *graph); };
        },
        OperationLock::keepAlive(Value()));
  });
}

Napi::Value ModelWrap::StartGeneration(const Napi::CallbackInfo& info) {
  return startGeneration(info, model_, device_);
}

Napi::Value ModelWrap::GenerateNext(const Napi::CallbackInfo& info) {
  return nextToken(info, thread_, OperationLock::keepAlive(Value()), /*betweenSteps=*/false);
}

// (path, strict) -> Promise<{ missing, unexpected }>
Napi::Value ModelWrap::LoadWeights(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string path = toString(info[0], "path");
    const bool strict = toBoolean(info[1], "strict");
    auto model = model_;
    return startOnThread(
        env, thread_,
        [model, path, strict]() -> PromiseWorker::Finish {
          const WeightsReport report = loadWeights(*model, *openWeightsFile(path), strict, path);
          return [report](Napi::Env env) -> Napi::Value { return toJs(env, report); };
        },
        lock_.claim(Value(), "loadWeights", "model"));
  });
}

Napi::Value ModelWrap::ParameterCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(model_->parameterCount()));
}

Napi::Value ModelWrap::Device(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), device_.str()); }

}  // namespace firebrand::binding
