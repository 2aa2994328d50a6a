// Entry point of firebrand.node: registers the classes and functions that
// src/native.ts declares.
#include <napi.h>

#include "binding/addon_data.h"
#include "binding/batch_queue_wrap.h"
#include "binding/dataset_wrap.h"
#include "binding/engine_wrap.h"
#include "binding/environment_teardown.h"
#include "binding/image_exports.h"
#include "binding/loader_wrap.h"
#include "binding/model_wrap.h"
#include "binding/runtime_exports.h"
#include "binding/safetensors_exports.h"
#include "core/runtime/runtime_info.h"

namespace firebrand::binding {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new AddonData());
  // The JS thread runs libtorch kernels on one thread: training and generation run on their own threads
  // with numThreads, and kernel threads kept by this one would slow their fork-joins (runtime_info.h).
  limitKernelThreadsOfThisThread();
  watchEnvironmentTeardown(env);
  exportTeardown(env, exports);
  DatasetWrap::Export(env, exports);
  BatchQueueWrap::Export(env, exports);
  LoaderWrap::Export(env, exports);
  ModelWrap::Export(env, exports);
  EngineWrap::Export(env, exports);
  exportRuntime(env, exports);
  exportSafetensors(env, exports);
  exportImages(env, exports);
  return exports;
}

NODE_API_MODULE(firebrand, Init)

}  // namespace firebrand::binding
