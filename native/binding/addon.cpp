// Entry point of firebrand.node: registers the classes and functions that
// src/native.ts declares.
#include <napi.h>

#include "binding/dataset_wrap.h"
#include "binding/engine_wrap.h"
#include "binding/runtime_exports.h"

namespace firebrand::binding {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  DatasetWrap::Export(env, exports);
  EngineWrap::Export(env, exports);
  exportRuntime(env, exports);
  return exports;
}

NODE_API_MODULE(firebrand, Init)

}  // namespace firebrand::binding
