#include "binding/runtime_exports.h"

#include "binding/convert.h"
#include "binding/js_errors.h"
#include "binding/results.h"
#include "core/runtime/runtime_info.h"

namespace firebrand::binding {
namespace {

Napi::Value RuntimeInfoValue(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value { return toJs(info.Env(), runtimeInfo()); });
}

void SetNumThreads(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { setNumThreads(toInteger(info[0], "numThreads", 1)); });
}

void ManualSeed(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { manualSeed(static_cast<uint64_t>(toInteger(info[0], "seed", 0))); });
}

}  // namespace

void exportRuntime(Napi::Env env, Napi::Object exports) {
  exports.Set("runtimeInfo", Napi::Function::New<RuntimeInfoValue>(env, "runtimeInfo"));
  exports.Set("setNumThreads", Napi::Function::New<SetNumThreads>(env, "setNumThreads"));
  exports.Set("manualSeed", Napi::Function::New<ManualSeed>(env, "manualSeed"));
}

}  // namespace firebrand::binding
