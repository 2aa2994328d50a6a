// JS handle of a model for inference only (Model.load): no loss, no
// optimizer. Its predictions run on a thread of its own, as a trainer's work
// does (task_thread.h): a service predicting leaves libuv's pool to its I/O.
#pragma once
#include <napi.h>

#include <memory>

#include "binding/operation_lock.h"
#include "binding/task_thread.h"
#include "core/model/model.h"

namespace firebrand::binding {

class ModelWrap : public Napi::ObjectWrap<ModelWrap> {
 public:
  static void Export(Napi::Env env, Napi::Object exports);
  // new NativeModel(modelSource, device)
  explicit ModelWrap(const Napi::CallbackInfo& info);
  // NativeModel.describe(modelSource) -> describeModel()'s object, built on the spot (no weights loaded).
  static Napi::Value Describe(const Napi::CallbackInfo& info);
  static Napi::Value Summary(const Napi::CallbackInfo& info);

 private:
  Napi::Value Predict(const Napi::CallbackInfo& info);
  // (prompt: TypedArray, options) -> a handle for generateNext.
  Napi::Value StartGeneration(const Napi::CallbackInfo& info);
  // (handle) -> Promise<number | null>: the next token, on this model's thread.
  Napi::Value GenerateNext(const Napi::CallbackInfo& info);
  Napi::Value LoadWeights(const Napi::CallbackInfo& info);
  // (example, options) -> Promise of the ONNX graph object (onnx_convert.h), on this model's thread.
  Napi::Value ExportOnnx(const Napi::CallbackInfo& info);
  Napi::Value ParameterCount(const Napi::CallbackInfo& info);
  Napi::Value Device(const Napi::CallbackInfo& info);

  std::shared_ptr<Model> model_;
  c10::Device device_ = c10::Device(c10::kCPU);
  OperationLock lock_;
  TaskThread thread_;  // runs this model's tasks
};

}  // namespace firebrand::binding
