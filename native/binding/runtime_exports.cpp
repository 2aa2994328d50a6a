#include "binding/runtime_exports.h"

#include "binding/convert.h"
#include "binding/js_errors.h"
#include "binding/results.h"
#include "core/runtime/runtime_info.h"
#include "core/optim/optimizer_factory.h"

namespace firebrand::binding {
namespace {

Napi::Value RuntimeInfoValue(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    RuntimeInfo runtime = runtimeInfo();
    runtime.fusedOptimizers = fusedOptimizers();
    return toJs(info.Env(), runtime);
  });
}

void SetNumThreads(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { setNumThreads(toInteger(info[0], "numThreads", 1), !info[1].IsUndefined() && toBoolean(info[1], "adaptive")); });
}

void ManualSeed(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { manualSeed(static_cast<uint64_t>(toInteger(info[0], "seed", 0))); });
}

void UseDeterministicAlgorithms(const Napi::CallbackInfo& info) {
  guard(info.Env(), [&] { useDeterministicAlgorithms(toBoolean(info[0], "deterministic")); });
}

}  // namespace

void exportRuntime(Napi::Env env, Napi::Object exports) {
  exports.Set("runtimeInfo", Napi::Function::New<RuntimeInfoValue>(env, "runtimeInfo"));
  exports.Set("setNumThreads", Napi::Function::New<SetNumThreads>(env, "setNumThreads"));
  exports.Set("manualSeed", Napi::Function::New<ManualSeed>(env, "manualSeed"));
  exports.Set("useDeterministicAlgorithms", Napi::Function::New<UseDeterministicAlgorithms>(env, "useDeterministicAlgorithms"));
}

}  // namespace firebrand::binding
