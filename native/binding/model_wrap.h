// JS handle of a model: one Model.load made (on a thread of its own: a
// service predicting leaves libuv's pool to its I/O), or a trainer's live
// model (on the trainer's thread, its work between two training steps during
// a fit). Predictions, generation, exports and the state dict live here only.
#pragma once
#include <napi.h>

#include <memory>
#include <optional>

#include "binding/operation_lock.h"
#include "binding/promise_worker.h"
#include "binding/task_thread.h"
#include "core/model/model.h"

namespace firebrand::binding {

// What a NativeModel works on: the model, where and in which dtype it runs, and the thread that runs its tasks.
struct ModelPlace {
  std::shared_ptr<Model> model;
  c10::Device device = c10::Device(c10::kCPU);
  std::optional<at::ScalarType> autocastDtype;
  std::shared_ptr<TaskThread> thread;
  bool ofTrainer = false;  // a trainer's live model: its weights change through the trainer only
};

class ModelWrap : public Napi::ObjectWrap<ModelWrap> {
 public:
  static void Export(Napi::Env env, Napi::Object exports);
  // new NativeModel(modelSource, device)
  explicit ModelWrap(const Napi::CallbackInfo& info);
  // A NativeModel over `place` (a trainer's live model).
  static Napi::Object Over(Napi::Env env, const ModelPlace& place);
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
  // (path) -> Promise<void>
  Napi::Value ExportTorchScript(const Napi::CallbackInfo& info);
  // () -> Promise<{ name: TensorData }>: CPU copies, in state-dict order.
  Napi::Value StateDict(const Napi::CallbackInfo& info);
  // -> { parameters: { name, shape, dtype, requiresGrad }[], buffers: { name, shape, dtype }[] }, state-dict order.
  Napi::Value Description(const Napi::CallbackInfo& info);
  Napi::Value ParameterCount(const Napi::CallbackInfo& info);
  Napi::Value Device(const Napi::CallbackInfo& info);
  // Starts `task` on this model's thread, after the tasks before it; on a trainer's thread, between two steps.
  Napi::Value startTask(Napi::Env env, PromiseWorker::Task task);

  ModelPlace place_;
  OperationLock lock_;
};

}  // namespace firebrand::binding
